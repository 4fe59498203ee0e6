package web

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// passes are random credentials of one kind that the Inbox window hands
// out: one-time sign-in links, the page loads' tokens, event-stream
// tickets. Only their SHA-256 is kept, so looking one up tells nothing
// about the others.
type passes struct {
	ttl  time.Duration // how long one is good for; 0: until the server stops
	max  int           // beyond this many, the oldest is forgotten
	once bool          // its first use uses it up

	mu     sync.Mutex
	issued map[[sha256.Size]byte]time.Time // when each was issued
	now    func() time.Time
}

func newPasses(ttl time.Duration, max int, once bool) *passes {
	return &passes{ttl: ttl, max: max, once: once, issued: map[[sha256.Size]byte]time.Time{}, now: time.Now}
}

// issue returns a new pass: 32 random bytes, hex.
func (p *passes) issue() string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	pass := hex.EncodeToString(raw)
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for k, at := range p.issued {
		if p.expired(at, now) {
			delete(p.issued, k)
		}
	}
	for len(p.issued) >= p.max {
		var oldest [sha256.Size]byte
		first := true
		for k, at := range p.issued {
			if first || at.Before(p.issued[oldest]) {
				oldest, first = k, false
			}
		}
		delete(p.issued, oldest)
	}
	p.issued[sha256.Sum256([]byte(pass))] = now
	return pass
}

// use reports whether pass is one of these and still good, and uses it
// up if it is good once.
func (p *passes) use(pass string) bool {
	if pass == "" {
		return false
	}
	k := sha256.Sum256([]byte(pass))
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.issued[k]
	if !ok {
		return false
	}
	good := !p.expired(at, p.now())
	if p.once || !good {
		delete(p.issued, k)
	}
	return good
}

func (p *passes) expired(at, now time.Time) bool { return p.ttl > 0 && now.Sub(at) > p.ttl }
