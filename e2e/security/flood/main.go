// Command flood is a stranger to the Inbox window's port: it holds
// connections there without a credential for a while, some fetching the
// page's own file over and over on one keep-alive connection, some
// sending nothing, each dialled again as soon as the server closes it.
// It prints "ready" once every connection is open, and at the end one JSON
// object: how many connections it opened and the age of the oldest one
// still open.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// Result is what flood prints at its end.
type Result struct {
	Dialled int `json:"dialled"`
	// OldestOpen is the age of the oldest connection still open at the
	// end, in seconds.
	OldestOpen float64 `json:"oldest_open"`
}

func main() {
	addr := flag.String("addr", "", "host:port of the page")
	fetching := flag.Int("fetching", 64, "connections that fetch / again and again")
	idle := flag.Int("idle", 64, "connections that send nothing")
	every := flag.Duration("every", 20*time.Second, "how often a fetching connection asks again")
	length := flag.Duration("for", 20*time.Second, "how long to go on")
	flag.Parse()
	end := time.Now().Add(*length)

	var (
		mu      sync.Mutex
		res     Result
		opened  = map[int]time.Time{}
		ready   sync.WaitGroup
		workers sync.WaitGroup
	)
	worker := func(id int, fetch bool) {
		defer workers.Done()
		first := true
		defer func() {
			if first {
				ready.Done() // never in: ready all the same
			}
		}()
		for time.Now().Before(end) {
			c, err := net.Dial("tcp", *addr)
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			mu.Lock()
			res.Dialled++
			opened[id] = time.Now()
			mu.Unlock()
			if first {
				ready.Done()
				first = false
			}
			c.SetDeadline(end)
			if fetch {
				r := bufio.NewReader(c)
				for {
					if _, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", *addr); err != nil {
						break
					}
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						break
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.Close {
						break
					}
					// Wait for the next ask, noticing a close meanwhile.
					c.SetReadDeadline(earliest(time.Now().Add(*every), end))
					if _, err := r.Peek(1); !isTimeout(err) || !time.Now().Before(end) {
						break
					}
					c.SetDeadline(end)
				}
			} else {
				io.Copy(io.Discard, c)
			}
			mu.Lock()
			if time.Now().Before(end) {
				delete(opened, id)
			}
			mu.Unlock()
			c.Close()
		}
	}
	n := *fetching + *idle
	ready.Add(n)
	workers.Add(n)
	for i := range n {
		go worker(i, i < *fetching)
	}
	ready.Wait()
	fmt.Println("ready")
	workers.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, at := range opened {
		res.OldestOpen = max(res.OldestOpen, end.Sub(at).Seconds())
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
