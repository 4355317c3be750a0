package toxics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	tptoxics "github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
	zerologlog "github.com/rs/zerolog/log"
)

func init() {
	// Toxiproxy's bandwidth toxic logs through zerolog's global logger,
	// down to trace level, on stderr; the harness owns its output.
	zerologlog.Logger = zerolog.Nop()
}

// ErrClosed is returned by calls on a closed Server or Proxy, so callers can
// tell a torn-down fixture from a failed fault.
var ErrClosed = errors.New("toxics: closed")

// Server is an embedded, in-process Toxiproxy: suites create one proxy per
// spec on it without running the Toxiproxy HTTP API, logging or metrics.
type Server struct {
	api *toxiproxy.ApiServer

	mu      sync.Mutex
	closed  bool
	proxies map[*Proxy]struct{}
}

// proxySeq makes proxy names unique in the process, across servers, since
// toxics find their proxy's fault state by name.
var proxySeq atomic.Uint64

// NewServer returns a Server with no proxies.
func NewServer() *Server {
	return &Server{
		api:     toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: make(map[*Proxy]struct{}),
	}
}

// Close removes every proxy, which closes their listeners and every
// connection through them. Later NewProxy calls fail with ErrClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	proxies := make([]*Proxy, 0, len(s.proxies))
	for p := range s.proxies {
		proxies = append(proxies, p)
	}
	s.mu.Unlock()
	for _, p := range proxies {
		p.Close()
	}
	return s.api.Collection.Clear()
}

// ProxyOption configures NewProxy.
type ProxyOption func(*proxyConfig)

type proxyConfig struct {
	reset bool
}

// WithReset makes the proxy able to Reset. It arms a dormant reset_peer
// toxic (toxicity 0) on every connection, which is what makes Toxiproxy set
// SO_LINGER 0 on both sockets of a connection when it opens; that cannot be
// done later for connections already open. Reset then closes connections
// through the switch toxic, at once: raising reset_peer's toxicity instead
// would reset a connection only when data next flows on it, and every new
// connection too. The cost is that every close such a proxy performs is a
// reset rather than a FIN: Refresh, CutAfter, Close, and closes passed on
// from either peer. Use it only on proxies meant for F-RESET.
func WithReset() ProxyOption {
	return func(c *proxyConfig) { c.reset = true }
}

// NewProxy starts a proxy listening on a free port of 127.0.0.1 that
// forwards every connection to upstream ("host:port"). The upstream is
// dialled per connection, so it need not be up yet. The Toxiproxy name is
// name with a unique suffix, so specs may reuse names.
func (s *Server) NewProxy(name, upstream string, opts ...ProxyOption) (*Proxy, error) {
	if err := checkUpstream(upstream); err != nil {
		return nil, err
	}
	var cfg proxyConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if name == "" {
		name = "proxy"
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("toxics: new proxy %q: %w", name, ErrClosed)
	}
	s.mu.Unlock()
	name = fmt.Sprintf("%s-%d", name, proxySeq.Add(1))

	tp := toxiproxy.NewProxy(s.api, name, "127.0.0.1:0", upstream)
	ctl := newControl()
	if cfg.reset {
		// First in the chain, so a later cut or kill still resets.
		dormant := toxicSpec{Name: "reset_dormant", Type: "reset_peer", Stream: "downstream",
			Toxicity: 0, Attributes: map[string]any{"timeout": 0}}
		if _, err := addToxic(tp, dormant); err != nil {
			return nil, fmt.Errorf("toxics: new proxy %q: %w", name, err)
		}
	}
	registerControl(name, ctl)
	for _, role := range []string{roleUpstream, roleDownstream} {
		if _, err := addToxic(tp, faultSpec("fault_"+role, name, role, role)); err != nil {
			unregisterControl(name)
			return nil, fmt.Errorf("toxics: new proxy %q: %w", name, err)
		}
	}
	if err := s.api.Collection.Add(tp, true); err != nil {
		unregisterControl(name)
		return nil, fmt.Errorf("toxics: new proxy %q: start: %w", name, err)
	}
	p := &Proxy{name: name, addr: tp.Listen, upstream: upstream, reset: cfg.reset, srv: s, tp: tp, ctl: ctl}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		ctl.release()
		_ = s.api.Collection.Remove(name)
		unregisterControl(name)
		return nil, fmt.Errorf("toxics: new proxy %q: %w", name, ErrClosed)
	}
	s.proxies[p] = struct{}{}
	return p, nil
}

// forget drops a closed proxy from the server's set.
func (s *Server) forget(p *Proxy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.proxies, p)
}

// UpstreamOf is the "host:port" that requests to u reach, the port
// defaulting by scheme: what a proxy standing in front of u forwards to.
func UpstreamOf(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// checkUpstream rejects addresses Toxiproxy would only fail on at the first
// connection, far from the mistake.
func checkUpstream(upstream string) error {
	host, port, err := net.SplitHostPort(upstream)
	if err != nil {
		return fmt.Errorf("toxics: upstream %q is not host:port: %w", upstream, err)
	}
	if host == "" {
		return fmt.Errorf("toxics: upstream %q has no host", upstream)
	}
	n, err := net.LookupPort("tcp", port)
	if err != nil || n <= 0 {
		return fmt.Errorf("toxics: upstream %q has no valid port", upstream)
	}
	return nil
}

// toxicSpec is the JSON Toxiproxy reads to create a toxic.
type toxicSpec struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// faultSpec describes a faultToxic of the given role on proxy.
func faultSpec(name, proxy, stream, role string) toxicSpec {
	return toxicSpec{Name: name, Type: faultType, Stream: stream, Toxicity: 1,
		Attributes: map[string]any{"proxy": proxy, "role": role}}
}

// addToxic adds a toxic to the proxy's chain; live links get it too.
func addToxic(tp *toxiproxy.Proxy, spec toxicSpec) (*tptoxics.ToxicWrapper, error) {
	body, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	w, err := tp.Toxics.AddToxicJson(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("add %s toxic: %w", spec.Type, err)
	}
	return w, nil
}
