// Package target describes what the harness may assume about a server under
// test beyond the specification: which tools emit notifications or keep
// per-session state, its declared timings, two principals' bearer tokens and
// an allowed and a disallowed Origin. A check whose needs are not declared is
// skipped, with the key that would enable it.
package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// Profile is a target profile: the file (YAML or JSON) describing the server under test.
type Profile struct {
	Tools      Tools       `json:"tools"`
	Timings    Timings     `json:"timings"`
	Principals []Principal `json:"principals,omitempty"`
	Origins    Origins     `json:"origins"`
	// RecoveryHint declares that a stale session id is answered with 404
	// plus the id of a new, initialized session.
	RecoveryHint bool `json:"recovery_hint,omitempty"`
	// Headers are sent on every request (for example a fixed API key).
	Headers map[string]string `json:"headers,omitempty"`
	// Listen declares subscriptions/listen (2026-07-28).
	Listen *Listen `json:"listen,omitempty"`
}

// Tools names the tools checks call.
type Tools struct {
	// Notifying emits notifications over time while it runs.
	Notifying *NotifyingTool `json:"notifying,omitempty"`
	// Stateful returns a value that changes with every call in a session.
	Stateful *Tool `json:"stateful,omitempty"`
	// Resumable leads to a resume token for the session-expired
	// envelope's data.resume.
	Resumable *ResumableTool `json:"resumable,omitempty"`
	// Task runs as a task when called with params.task (the tasks
	// utility of 2025-11-25; its execution.taskSupport is optional or
	// required).
	Task *TaskTool `json:"task,omitempty"`
	// Stepping works in steps that leave a count another call reads
	// (2026-07-28, where closing a call's stream cancels it).
	Stepping *SteppingTool `json:"stepping,omitempty"`
}

// Key is the placeholder a check replaces, in the arguments of
// tools.stepping and in listen, with a new random value of its own, so
// that checks running side by side never share a count or a resource.
const Key = "{key}"

// SteppingTool is a tool that takes Steps steps, one every Interval, each
// adding one to a count that Read returns (a number in its
// structuredContent.count or its text). Its arguments and Read's name the
// count with Key.
type SteppingTool struct {
	Tool
	Read     Tool     `json:"read"`
	Steps    int      `json:"steps"`
	Interval Duration `json:"interval"`
}

// Listen is how a check of the sessionless revision listens for change
// notifications: the subscriptions/listen filter to send, and a tool
// whose call makes one notification of Method happen on a stream
// listening with that filter. Both may contain Key.
type Listen struct {
	Notifications map[string]any `json:"notifications"`
	Trigger       Tool           `json:"trigger"`
	Method        string         `json:"method"`
}

// minSteps is the fewest steps a stepping tool may take: a check sees some
// counted, closes the call's stream, and needs many left to be sure the
// count stopped.
const minSteps = 10

// TaskTool is a tool that runs as a task for about Duration: long enough
// for a check to act while it is still working.
type TaskTool struct {
	Tool
	Duration Duration `json:"duration"`
}

// ResumableTool is how a client gets a resume token: the tool's result,
// or else Poll's, carries it in structuredContent under the name the
// envelope's data.resume.via gives.
type ResumableTool struct {
	Tool
	// Poll, when set, is a tool called with the first result's
	// structuredContent as its arguments, again until its result carries
	// the token (a job started by Tool, fetched by Poll).
	Poll string `json:"poll,omitempty"`
}

// Tool is a tool name with the arguments to call it with.
type Tool struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// NotifyingTool is a tool that sends Notifications messages of Method,
// one every Interval, before its result.
type NotifyingTool struct {
	Tool
	// Method of the notifications counted; default notifications/progress
	// (sent because the harness gives the call a progress token).
	Method        string   `json:"method,omitempty"`
	Notifications int      `json:"notifications"`
	Interval      Duration `json:"interval"`
}

// Timings are the target's declared session and event timings.
type Timings struct {
	IdleThreshold Duration `json:"idle_threshold,omitempty"`
	// GracePeriod may be declared 0s: a server with an idle TTL and no
	// grace period (GraceDeclared tells 0s from absent).
	GracePeriod          Duration `json:"grace_period,omitempty"`
	ReaperInterval       Duration `json:"reaper_interval,omitempty"`
	EventMaxAge          Duration `json:"event_max_age,omitempty"`
	EventCleanupInterval Duration `json:"event_cleanup_interval,omitempty"`
	// WriteTimeout is how long one write to a client may block before the
	// target gives up on that stream (its per-write deadline).
	WriteTimeout Duration `json:"write_timeout,omitempty"`
	// KeepAlive is the longest a quiet long-lived SSE stream (a
	// subscriptions/listen stream) goes without a comment line.
	KeepAlive Duration `json:"keep_alive,omitempty"`

	noGrace bool // grace_period declared as 0s
}

// GraceDeclared reports whether the profile declares a grace period,
// 0s included.
func (t Timings) GraceDeclared() bool { return t.GracePeriod > 0 || t.noGrace }

// WithoutGrace returns t declaring no grace period (grace_period: 0s).
func (t Timings) WithoutGrace() Timings {
	t.GracePeriod, t.noGrace = 0, true
	return t
}

// timingsFields is Timings without its methods, to decode it plainly.
type timingsFields Timings

// UnmarshalJSON decodes the timings strictly (unknown keys are errors)
// and notes a grace period declared as 0s.
func (t *Timings) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f timingsFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	_, declared := keys["grace_period"]
	*t = Timings(f)
	t.noGrace = declared && t.GracePeriod == 0
	return nil
}

// MarshalJSON writes a grace period declared as 0s.
func (t Timings) MarshalJSON() ([]byte, error) {
	type plain timingsFields
	out, err := json.Marshal(plain(t))
	if err != nil || !t.noGrace {
		return out, err
	}
	return append(out[:len(out)-1], []byte(`,"grace_period":"0s"}`)...), nil
}

// Principal is one identity's bearer token.
type Principal struct {
	Name  string `json:"name,omitempty"`
	Token string `json:"token"`
	// RefreshedToken is another valid token of the same principal (as a
	// token refresh gives it), declared for the first principal only
	// (AUTH-REFRESH-REJOIN).
	RefreshedToken string `json:"refreshed_token,omitempty"`
}

// RequestHeader is what every request of the harness carries: the
// profile's headers, the first principal's bearer token and the allowed
// Origin.
func (c *Profile) RequestHeader() http.Header {
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	if len(c.Principals) > 0 {
		h.Set("Authorization", "Bearer "+c.Principals[0].Token)
	}
	if c.Origins.Allowed != "" {
		h.Set("Origin", c.Origins.Allowed)
	}
	return h
}

// DefaultDisallowedOrigin is the foreign Origin sent when the profile
// names none: a reserved name (RFC 2606) no deployment allows.
const DefaultDisallowedOrigin = "https://mcp-conform.invalid"

// DisallowedOrigin is the Origin the target must refuse: the declared one,
// or DefaultDisallowedOrigin.
func (o Origins) DisallowedOrigin() string {
	if o.Disallowed != "" {
		return o.Disallowed
	}
	return DefaultDisallowedOrigin
}

// Origins are Origin header values the target allows and refuses.
type Origins struct {
	Allowed    string `json:"allowed,omitempty"`
	Disallowed string `json:"disallowed,omitempty"`
}

// DefaultNotificationMethod is counted when a notifying tool names none.
const DefaultNotificationMethod = "notifications/progress"

// minNotifications is the fewest a notifying tool may send: checks read some,
// cut the connection, and expect the rest afterwards.
const minNotifications = 4

// Load reads a profile file; YAML and JSON are both accepted and unknown
// keys are errors, so a typo does not silently skip checks.
func Load(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("target config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("target config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes and validates a profile.
func Parse(data []byte) (*Profile, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var c Profile
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate reports the first inconsistent key.
func (c *Profile) Validate() error {
	var errs []error
	if n := c.Tools.Notifying; n != nil {
		if n.Name == "" {
			errs = append(errs, errors.New("tools.notifying.name is empty"))
		}
		if n.Notifications < minNotifications {
			errs = append(errs, fmt.Errorf("tools.notifying.notifications must be at least %d, got %d", minNotifications, n.Notifications))
		}
		if n.Interval <= 0 {
			errs = append(errs, errors.New("tools.notifying.interval must be a positive duration such as 200ms"))
		}
		if n.Method == "" {
			n.Method = DefaultNotificationMethod
		}
	}
	if s := c.Tools.Stateful; s != nil && s.Name == "" {
		errs = append(errs, errors.New("tools.stateful.name is empty"))
	}
	if r := c.Tools.Resumable; r != nil && r.Name == "" {
		errs = append(errs, errors.New("tools.resumable.name is empty"))
	}
	if k := c.Tools.Task; k != nil {
		if k.Name == "" {
			errs = append(errs, errors.New("tools.task.name is empty"))
		}
		if k.Duration <= 0 {
			errs = append(errs, errors.New("tools.task.duration must be a positive duration such as 1s (how long one call runs)"))
		}
	}
	if st := c.Tools.Stepping; st != nil {
		if st.Name == "" || st.Read.Name == "" {
			errs = append(errs, errors.New("tools.stepping.name and tools.stepping.read.name must be set"))
		}
		if st.Steps < minSteps {
			errs = append(errs, fmt.Errorf("tools.stepping.steps must be at least %d, got %d", minSteps, st.Steps))
		}
		if st.Interval <= 0 {
			errs = append(errs, errors.New("tools.stepping.interval must be a positive duration such as 50ms"))
		}
	}
	if l := c.Listen; l != nil {
		if l.Notifications == nil || l.Trigger.Name == "" || l.Method == "" {
			errs = append(errs, errors.New("listen.notifications, listen.trigger.name and listen.method must be set"))
		}
	}
	t := c.Timings
	set := 0
	for _, d := range []Duration{t.IdleThreshold, t.GracePeriod, t.ReaperInterval} {
		if d < 0 {
			errs = append(errs, errors.New("timings must not be negative"))
		}
		if d > 0 {
			set++
		}
	}
	if t.noGrace {
		set++ // 0s is a declared grace period: an idle TTL alone
	}
	if set != 0 && set != 3 {
		errs = append(errs, errors.New("timings.idle_threshold, grace_period and reaper_interval go together: declare all three or none (grace_period may be 0s)"))
	}
	if t.EventMaxAge < 0 || t.EventCleanupInterval < 0 || t.WriteTimeout < 0 || t.KeepAlive < 0 {
		errs = append(errs, errors.New("timings must not be negative"))
	}
	if len(c.Principals) != 0 && len(c.Principals) != 2 {
		errs = append(errs, fmt.Errorf("principals: declare exactly two, got %d", len(c.Principals)))
	}
	for i, p := range c.Principals {
		if p.Token == "" {
			errs = append(errs, fmt.Errorf("principals[%d].token is empty", i))
		}
	}
	if len(c.Principals) == 2 && c.Principals[0].Token == c.Principals[1].Token {
		errs = append(errs, errors.New("principals: the two tokens must differ"))
	}
	for i, p := range c.Principals {
		switch {
		case p.RefreshedToken == "":
		case i > 0:
			errs = append(errs, fmt.Errorf("principals[%d].refreshed_token: only the first principal's is used", i))
		case p.RefreshedToken == p.Token || (len(c.Principals) == 2 && p.RefreshedToken == c.Principals[1].Token):
			errs = append(errs, errors.New("principals[0].refreshed_token must differ from both principals' tokens"))
		}
	}
	for k := range c.Headers {
		if strings.EqualFold(k, wire.HeaderSessionID) || strings.EqualFold(k, wire.HeaderProtocolVersion) {
			errs = append(errs, fmt.Errorf("headers: %s is set by the harness", k))
		}
	}
	return errors.Join(errs...)
}

// Has reports whether the profile declares what key (a catalogue.Key*
// constant) stands for.
func (c *Profile) Has(key catalogue.Key) bool {
	switch key {
	case catalogue.KeyNotifying:
		return c.Tools.Notifying != nil
	case catalogue.KeyStateful:
		return c.Tools.Stateful != nil
	case catalogue.KeyGraceTimings:
		return c.Timings.IdleThreshold > 0 && c.Timings.GraceDeclared() && c.Timings.ReaperInterval > 0
	case catalogue.KeyEventMaxAge:
		return c.Timings.EventMaxAge > 0
	case catalogue.KeyPrincipals:
		return len(c.Principals) == 2
	case catalogue.KeyRefreshedToken:
		return len(c.Principals) == 2 && c.Principals[0].RefreshedToken != ""
	case catalogue.KeyOriginDenied:
		return c.Origins.Disallowed != ""
	case catalogue.KeyRecoveryHint:
		return c.RecoveryHint
	case catalogue.KeyResumable:
		return c.Tools.Resumable != nil
	case catalogue.KeyTask:
		return c.Tools.Task != nil
	case catalogue.KeyStepping:
		return c.Tools.Stepping != nil
	case catalogue.KeyListen:
		return c.Listen != nil
	case catalogue.KeyKeepAlive:
		return c.Timings.KeepAlive > 0
	}
	return false
}

// Duration is a time.Duration written as a Go duration string ("1.5s").
type Duration time.Duration

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON accepts "250ms", "2m" and the like.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"2s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
