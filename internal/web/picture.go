package web

// The picture of the Inbox window (docs/behaviour.md §9): provider errors
// per provider over the last 24 hours or 7 days, and the outages as bands.

import (
	"encoding/json"
	"mime"
	"net/http"
	"time"

	"nudge/internal/classify"
	"nudge/internal/outage"
)

// Picture is what GET /api/picture gives.
type Picture struct {
	Since       time.Time        `json:"since"`
	StepSeconds int              `json:"step_seconds"` // the width of a bucket
	Buckets     int              `json:"buckets"`
	Providers   []ProviderErrors `json:"providers"`
	Outages     []PictureOutage  `json:"outages"`
}

// ProviderErrors are one provider's errors, one count per bucket.
type ProviderErrors struct {
	Provider string `json:"provider"`
	Title    string `json:"title"`
	Counts   []int  `json:"counts"`
}

// PictureOutage is an outage as a band.
type PictureOutage struct {
	Provider  string     `json:"provider"`
	Title     string     `json:"title"`
	Start     time.Time  `json:"start"`
	End       *time.Time `json:"end,omitempty"` // nil while it lasts
	Sessions  int        `json:"sessions"`
	Continued int        `json:"continued"` // sessions continued when it ended
}

// pictureRanges are the spans the picture shows and their buckets.
var pictureRanges = map[string]struct{ span, step time.Duration }{
	"24h": {24 * time.Hour, time.Hour},
	"7d":  {7 * 24 * time.Hour, 6 * time.Hour},
}

func (a *api) picture(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("range")
	if name == "" {
		name = "24h"
	}
	rg, ok := pictureRanges[name]
	if !ok {
		http.Error(w, "range is 24h or 7d", http.StatusBadRequest)
		return
	}
	now := time.Now().UTC()
	since := now.Add(-rg.span).Truncate(rg.step).Add(rg.step)
	p := Picture{Since: since, StepSeconds: int(rg.step / time.Second), Buckets: int(rg.span / rg.step),
		Providers: []ProviderErrors{}, Outages: []PictureOutage{}}
	counts, err := a.db.ProviderErrors(r.Context(), since, rg.step)
	if err != nil {
		a.fail(w, err)
		return
	}
	for _, c := range counts {
		if c.Bucket < 0 || c.Bucket >= p.Buckets {
			continue
		}
		if n := len(p.Providers); n == 0 || p.Providers[n-1].Provider != c.Provider {
			p.Providers = append(p.Providers, ProviderErrors{Provider: c.Provider, Title: classify.ProviderTitle(c.Provider), Counts: make([]int, p.Buckets)})
		}
		p.Providers[len(p.Providers)-1].Counts[c.Bucket] = c.Count
	}
	rows, err := a.db.Outages(r.Context(), false)
	if err != nil {
		a.fail(w, err)
		return
	}
	for _, row := range rows {
		if !row.End.IsZero() && row.End.Before(since) {
			continue
		}
		var o outage.Outage
		if err := json.Unmarshal(row.Outage, &o); err != nil {
			a.log.Warn("stored outage unreadable", "provider", row.Provider, "err", err)
			continue
		}
		po := PictureOutage{Provider: o.Provider, Title: classify.ProviderTitle(o.Provider), Start: o.Start, Sessions: len(o.Members)}
		if !o.Open() {
			end := o.End
			po.End = &end
		}
		for _, m := range o.Members {
			if m.Continued {
				po.Continued++
			}
		}
		p.Outages = append(p.Outages, po)
	}
	writeJSON(w, p)
}

// continueRequest is the body of POST /api/continue and its answer.
type continueRequest struct {
	Provider  string `json:"provider,omitempty"`
	Continued int    `json:"continued"`
}

// continueAll continues the sessions waiting for an outage now, as
// `nudge continue --all` does.
func (a *api) continueAll(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "send the request as application/json", http.StatusUnsupportedMediaType)
		return
	}
	var in continueRequest
	dec := json.NewDecoder(r.Body) // at most maxBody (guard)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		http.Error(w, "bad continue request: "+err.Error(), http.StatusBadRequest)
		return
	}
	n, err := a.d.ContinueAll(in.Provider)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, continueRequest{Provider: in.Provider, Continued: n})
}
