package daemon

import (
	"fmt"
	"testing"
	"time"

	"nudge/internal/outage"
)

// BenchmarkOutageBurst: 50 sessions die on one provider at once, one probes
// it while the others wait, the probe's turn completes and every waiting
// session is continued. Per op, the CPU and memory of the whole burst
// (-benchmem); s-to-last-continued is the time on the daemon's clock from
// the probe's completed turn to the last continuation sent.
func BenchmarkOutageBurst(b *testing.B) {
	const n = 50
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i+1, i+1)
	}
	states := func(c *core) map[string]int {
		m := map[string]int{}
		for _, s := range c.status().Sessions {
			m[s.State]++
		}
		return m
	}
	var last time.Duration
	for b.Loop() {
		c := newCore(b)
		c.start()
		for _, id := range ids {
			c.writeIn(id, prompt("p", "task"), apiError("e", 529, "API Error: 529 overloaded"))
		}
		c.eventually("every session retrying", func() bool { return states(c)["retrying"] == n })
		c.advance(10 * time.Second)
		c.eventually("all but the probe waiting", func() bool { return states(c)["waiting_provider"] == n-1 })
		back := c.clock.now()
		c.writeIn(ids[0], prompt("c", coreText), endTurn("d"))
		c.eventually("the outage over", func() bool { return len(c.status().Outages) == 0 })
		for states(c)["waiting_provider"]+states(c)["retrying"] > 0 {
			c.advance(outage.Spacing)
		}
		c.eventually("every continuation sent", func() bool { return count(c.log.all(), "deliver "+coreText) == n })
		last = c.clock.now().Sub(back)
		c.stop()
	}
	b.ReportMetric(last.Seconds(), "s-to-last-continued")
}

// count is how many of lines are line.
func count(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}
