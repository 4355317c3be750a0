package storm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// ProcStats is a server's resident memory and CPU time so far.
type ProcStats struct {
	RSS int64 // bytes
	CPU time.Duration
}

// ServerStats is what the storm measured of a server it started.
type ServerStats struct {
	RSSStart          int64   `json:"rss_start_bytes"`
	RSSIdle           int64   `json:"rss_idle_bytes"` // right after setup, before the calls
	IdleKiBPerSession float64 `json:"idle_kib_per_session"`
	RSSPeak           int64   `json:"rss_peak_bytes"`
	SetupCPUSeconds   float64 `json:"setup_cpu_seconds"`
	StormCPUSeconds   float64 `json:"storm_cpu_seconds"` // calls, cut, reconnects
}

// ProcessGroup samples the processes of process group pgid from /proc (Linux).
func ProcessGroup(pgid int) func() (ProcStats, error) {
	page := int64(os.Getpagesize())
	return func() (ProcStats, error) {
		stats, err := filepath.Glob("/proc/[0-9]*/stat")
		if err != nil || len(stats) == 0 {
			return ProcStats{}, fmt.Errorf("no /proc to sample the server: %v", err)
		}
		var total ProcStats
		found := false
		for _, path := range stats {
			b, err := os.ReadFile(path)
			if err != nil {
				continue // exited
			}
			// Fields after the command name (which may hold spaces), from
			// field 3: state, ppid, pgrp, ... utime (14), stime (15), ... rss (24).
			i := bytes.LastIndexByte(b, ')')
			if i < 0 {
				continue
			}
			f := bytes.Fields(b[i+1:])
			if len(f) < 22 {
				continue
			}
			if pg, _ := strconv.Atoi(string(f[2])); pg != pgid {
				continue
			}
			found = true
			ut, _ := strconv.ParseInt(string(f[11]), 10, 64)
			stt, _ := strconv.ParseInt(string(f[12]), 10, 64)
			rss, _ := strconv.ParseInt(string(f[21]), 10, 64)
			total.CPU += time.Duration(ut+stt) * time.Second / clockTick
			total.RSS += rss * page
		}
		if !found {
			return ProcStats{}, fmt.Errorf("process group %d is gone", pgid)
		}
		return total, nil
	}
}

// clockTick is the unit of /proc's CPU times (USER_HZ), 100 on every Linux port.
const clockTick = 100

// sampler watches the server during a run: its RSS peak every 100 ms, and
// its CPU at the phase boundaries.
type sampler struct {
	f    func() (ProcStats, error)
	r    *Result
	mu   sync.Mutex
	s    *ServerStats
	cpu0 time.Duration
	cpu1 time.Duration
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func (st *storm) sampleServer(r *Result) *sampler {
	sp := &sampler{f: st.o.Server, r: r, quit: make(chan struct{})}
	if sp.f == nil {
		return sp
	}
	p, err := sp.f()
	if err != nil {
		return sp
	}
	sp.s = &ServerStats{RSSStart: p.RSS, RSSPeak: p.RSS}
	sp.cpu0 = p.CPU
	sp.wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sp.quit:
				return
			case <-t.C:
				if p, err := sp.f(); err == nil {
					sp.mu.Lock()
					sp.s.RSSPeak = max(sp.s.RSSPeak, p.RSS)
					sp.mu.Unlock()
				}
			}
		}
	})
	return sp
}

// idle records the server after setup.
func (sp *sampler) idle(sessions int) {
	if sp.s == nil {
		return
	}
	p, err := sp.f()
	if err != nil {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.s.RSSIdle = p.RSS
	sp.s.RSSPeak = max(sp.s.RSSPeak, p.RSS)
	sp.s.IdleKiBPerSession = float64(p.RSS-sp.s.RSSStart) / 1024 / float64(sessions)
	sp.cpu1 = p.CPU
	sp.s.SetupCPUSeconds = (p.CPU - sp.cpu0).Seconds()
}

// stop ends the sampling and records the storm's CPU.
func (sp *sampler) stop() {
	sp.once.Do(func() {
		close(sp.quit)
		sp.wg.Wait()
		if sp.s == nil {
			return
		}
		if p, err := sp.f(); err == nil {
			sp.s.RSSPeak = max(sp.s.RSSPeak, p.RSS)
			if sp.cpu1 > 0 {
				sp.s.StormCPUSeconds = (p.CPU - sp.cpu1).Seconds()
			}
		}
		sp.r.Server = sp.s
	})
}
