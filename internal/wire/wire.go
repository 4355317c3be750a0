// Package wire speaks MCP Streamable HTTP at the level of requests, statuses,
// headers and SSE events. The harness and the tests use it where they must
// see exactly what a server sends, which an SDK client would hide.
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
)

// The protocol vocabulary of the harness side, defined once: header names,
// what a client accepts per method, and the session-expired envelope. (The
// reference server keeps its own copy on purpose: it is the code others
// copy, and must not lean on the harness that grades it.)
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderLastEventID     = "Last-Event-ID"
	// DefaultProtocolVersion is the revision negotiated unless told otherwise.
	DefaultProtocolVersion = "2025-11-25"
	// SessionlessProtocolVersion is the first revision without sessions,
	// initialize or GET streams, whose tasks are an extension.
	SessionlessProtocolVersion = "2026-07-28"

	// MediaTypeJSON and MediaTypeSSE are the two media types of an answer.
	MediaTypeJSON = "application/json"
	MediaTypeSSE  = "text/event-stream"
	// AcceptPOST is the Accept of a POST: a JSON body or an SSE stream.
	AcceptPOST = MediaTypeJSON + ", " + MediaTypeSSE
	// AcceptGET is the Accept of a GET: an SSE stream only.
	AcceptGET = MediaTypeSSE
	// ContentTypeJSON is the Content-Type of a POST body.
	ContentTypeJSON = MediaTypeJSON

	// CodeSessionExpired is the JSON-RPC error code of the session-expired
	// envelope (a 404 for an unknown or expired session id).
	CodeSessionExpired = -32003
	// SessionExpiredMessage and SessionExpiredReason are its error.message
	// and error.data.reason.
	SessionExpiredMessage = "Session expired; reinitialize"
	SessionExpiredReason  = "session_expired"
)

// maxBody bounds a JSON response body read into memory, and
// maxErrorBody the part of an error status's body that is kept.
const (
	maxBody      = 16 << 20
	maxErrorBody = 64 << 10
)

// Client sends raw MCP requests to one endpoint.
type Client struct {
	URL  string
	HTTP *http.Client
	// ProtocolVersion is offered in initialize and sent as MCP-Protocol-Version.
	ProtocolVersion string
	// Header is added to every request (Authorization, Origin, ...).
	Header http.Header
	// FollowRedirects follows redirects within the endpoint's origin;
	// others, and every redirect without it, are answers (RedirectPolicy).
	FollowRedirects bool
	// Stateless: the target issues no session ids, so requests go without
	// one and still carry MCP-Protocol-Version, as every request after
	// initialize must (initialize, the negotiation, carries none).
	Stateless bool

	nextID atomic.Int64
	idBase int64
}

// New returns a client for url with its own http.Client. Its request ids
// start at a random base, so that two clients' ids differ: an answer a
// server delivers to the wrong session or request does not carry an id the
// receiving client is waiting for.
func New(url string) *Client {
	c := &Client{URL: url, HTTP: &http.Client{CheckRedirect: RedirectPolicy(false)}, ProtocolVersion: DefaultProtocolVersion, Header: http.Header{}}
	c.idBase = rand.Int64N(idBases) * idSpan
	c.nextID.Store(c.idBase)
	return c
}

// A client's ids are idSpan apart from another's base: at most 2^40 bases
// of 2^12 ids each, all safe integers (below 2^53), which any JSON
// decoder keeps exactly.
const (
	idBases = 1 << 40
	idSpan  = 1 << 12
)

// Message is a JSON-RPC message as it travels.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// IsResponse reports whether m answers a request.
func (m Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// Response is a fully read HTTP response.
type Response struct {
	Status int
	Header http.Header
	// Body is the raw body of a non-SSE response; of an error status, its
	// first maxErrorBody bytes.
	Body []byte
	// BodyLeftOut counts the bytes of an error body past Body, read and
	// dropped: nothing a check judges lies that far in.
	BodyLeftOut int64
	// Events are the SSE events of a text/event-stream response.
	Events []sse.Event
	// IsSSE reports a text/event-stream response.
	IsSSE bool
	// URL is the URL that answered: the request's, or where a followed
	// redirect led.
	URL string
}

// SessionID returns the Mcp-Session-Id response header.
func (r *Response) SessionID() string { return r.Header.Get(HeaderSessionID) }

// Messages decodes the JSON-RPC messages of the response: each SSE event's
// data, or the JSON body (a single message or a batch).
func (r *Response) Messages() ([]Message, error) {
	var out []Message
	if r.IsSSE {
		for _, e := range r.Events {
			if strings.TrimSpace(e.Data) == "" {
				continue // priming event
			}
			var m Message
			if err := json.Unmarshal([]byte(e.Data), &m); err != nil {
				return out, fmt.Errorf("SSE event %q: %w", e.ID, err)
			}
			out = append(out, m)
		}
		return out, nil
	}
	body := bytes.TrimSpace(r.Body)
	if len(body) == 0 {
		return nil, nil
	}
	if body[0] == '[' {
		err := json.Unmarshal(body, &out)
		return out, err
	}
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	return []Message{m}, nil
}

// Result returns the first response message, or an error if there is none.
func (r *Response) Result() (Message, error) {
	msgs, err := r.Messages()
	if err != nil {
		return Message{}, err
	}
	for _, m := range msgs {
		if m.IsResponse() {
			return m, nil
		}
	}
	return Message{}, fmt.Errorf("no JSON-RPC response in HTTP %d answer (body %q)", r.Status, truncate(r.Body))
}

// Request builds a JSON-RPC request with a fresh numeric id.
func (c *Client) Request(method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "id": c.nextID.Add(1), "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

// Issued reports whether id is one of the numeric ids Request gave out:
// an answer carrying another is not to this client's requests.
func (c *Client) Issued(id json.RawMessage) bool {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(id)), 10, 64)
	return err == nil && n > c.idBase && n <= c.nextID.Load()
}

// Notification builds a JSON-RPC notification.
func Notification(method string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method}
}

// NewHTTPRequest builds an HTTP request with the transport's headers. body
// is marshalled to JSON unless it is nil, []byte or string.
func (c *Client) NewHTTPRequest(ctx context.Context, method, sessionID string, body any) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", ContentTypeJSON)
		req.Header.Set("Accept", AcceptPOST)
	case http.MethodGet:
		req.Header.Set("Accept", AcceptGET)
	}
	if sessionID != "" {
		req.Header.Set(HeaderSessionID, sessionID)
	}
	if c.ProtocolVersion != "" && (sessionID != "" || (c.Stateless && !isInitialize(body))) {
		req.Header.Set(HeaderProtocolVersion, c.ProtocolVersion)
	}
	return req, nil
}

// isInitialize reports whether a request body is an initialize request.
func isInitialize(body any) bool {
	var data []byte
	switch b := body.(type) {
	case map[string]any:
		return b["method"] == "initialize"
	case []byte:
		data = b
	case string:
		data = []byte(b)
	default:
		return false
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(data, &m) == nil && m.Method == "initialize"
}

// Do sends req and reads the whole answer (an SSE stream until it ends).
func (c *Client) Do(req *http.Request) (*Response, error) {
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header, IsSSE: IsSSE(resp), URL: resp.Request.URL.String()}
	if !out.IsSSE {
		if resp.StatusCode < 400 {
			out.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
			return out, err
		}
		// An error body is read whole, to reuse the connection, but only
		// its beginning is kept: a target's huge one costs no memory.
		if out.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody)); err == nil {
			out.BodyLeftOut, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		}
		return out, err
	}
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out.Events = append(out.Events, ev)
	}
}

// Post sends one JSON-RPC message (or raw body) and reads the whole answer.
func (c *Client) Post(ctx context.Context, sessionID string, body any) (*Response, error) {
	req, err := c.NewHTTPRequest(ctx, http.MethodPost, sessionID, body)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// Delete ends a session.
func (c *Client) Delete(ctx context.Context, sessionID string) (*Response, error) {
	req, err := c.NewHTTPRequest(ctx, http.MethodDelete, sessionID, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// InitializeParams returns initialize params for the client's protocol version.
func (c *Client) InitializeParams() map[string]any {
	return map[string]any{
		"protocolVersion": c.ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcp-conform", "version": "0"},
	}
}

// Initialize sends initialize, with sessionID when re-initializing a live
// session, and returns the raw answer.
func (c *Client) Initialize(ctx context.Context, sessionID string) (*Response, error) {
	return c.Post(ctx, sessionID, c.Request("initialize", c.InitializeParams()))
}

// Connect runs the whole handshake (initialize, notifications/initialized)
// and returns the session id.
func (c *Client) Connect(ctx context.Context) (string, error) {
	resp, err := c.Initialize(ctx, "")
	if err != nil {
		return "", err
	}
	if resp.Status != http.StatusOK {
		return "", fmt.Errorf("initialize: HTTP %d: %s", resp.Status, truncate(resp.Body))
	}
	m, err := resp.Result()
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	if m.Error != nil {
		return "", fmt.Errorf("initialize: %w", m.Error)
	}
	sid := resp.SessionID()
	sent := time.Now()
	n, err := c.Post(ctx, sid, Notification("notifications/initialized"))
	if err != nil {
		return "", err
	}
	// Any 2xx accepts it: the session is made, whatever JSONRPC-NOTIFY-202
	// says of a status other than 202.
	if n.Status < 200 || n.Status > 299 {
		return "", &InitializedError{SessionID: sid, Response: n, Sent: sent}
	}
	return sid, nil
}

// InitializedError is Connect's error when the server did not accept the
// notifications/initialized of the session its initialize had just made
// (an error status).
type InitializedError struct {
	SessionID string
	Response  *Response
	// Sent is when the notification was sent: the session was silent from
	// its initialize until then.
	Sent time.Time
}

func (e *InitializedError) Error() string {
	return fmt.Sprintf("notifications/initialized: HTTP %d, an error status (a session's handshake wants 202): %s", e.Response.Status, truncate(e.Response.Body))
}

// Call sends a request and returns its answer.
func (c *Client) Call(ctx context.Context, sessionID, method string, params any) (*Response, error) {
	return c.Post(ctx, sessionID, c.Request(method, params))
}

// ToolParams builds tools/call params, with a progress token if non-empty.
// The arguments are always an object: none, or a nil map, is sent as {},
// since servers that validate params with a schema refuse null.
func ToolParams(name string, args any, progressToken string) map[string]any {
	if noArguments(args) {
		args = map[string]any{}
	}
	p := map[string]any{"name": name, "arguments": args}
	if progressToken != "" {
		p["_meta"] = map[string]any{"progressToken": progressToken}
	}
	return p
}

// noArguments reports arguments that would be marshalled as null (or not
// at all): a nil interface, a nil map, pointer or slice held in one (a
// typed nil is not == nil), or raw JSON that is empty or null.
func noArguments(args any) bool {
	if raw, ok := args.(json.RawMessage); ok {
		raw = bytes.TrimSpace(raw)
		return len(raw) == 0 || string(raw) == "null"
	}
	if args == nil {
		return true
	}
	switch v := reflect.ValueOf(args); v.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// ToolText calls a tool and returns the text of its first content item.
// HTTP failures, JSON-RPC errors and tool errors are errors.
func (c *Client) ToolText(ctx context.Context, sessionID, name string, args any) (string, error) {
	resp, err := c.Call(ctx, sessionID, "tools/call", ToolParams(name, args, ""))
	if err != nil {
		return "", err
	}
	if resp.Status != http.StatusOK {
		return "", &StatusError{Status: resp.Status, Body: string(truncate(resp.Body))}
	}
	m, err := resp.Result()
	if err != nil {
		return "", err
	}
	if m.Error != nil {
		return "", m.Error
	}
	return ResultText(m.Result)
}

// ResultText returns the first text content of a CallToolResult, or an error
// if the result is a tool error.
func ResultText(result json.RawMessage) (string, error) {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "", err
	}
	text := ""
	if len(r.Content) > 0 {
		text = r.Content[0].Text
	}
	if r.IsError {
		return "", fmt.Errorf("tool error: %s", text)
	}
	return text, nil
}

// StatusError is an unexpected HTTP status.
type StatusError struct {
	Status int
	Body   string
	// ContentType is the answer's, which was not text/event-stream.
	ContentType string
}

func (e *StatusError) Error() string {
	if e.Status/100 == 2 {
		// A success that is no stream: say what it was instead.
		ct := e.ContentType
		if ct == "" {
			ct = "none"
		}
		return fmt.Sprintf("HTTP %d with Content-Type %s, not an SSE stream: %s", e.Status, ct, e.Body)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body)
}

// errorBodyWait bounds how long the body of an answer that was to be a
// stream and is not is read for an error message: one labelled as
// something else may be a stream that never ends.
var errorBodyWait = time.Second

// errorBody reads at most 4 KiB of body, for at most errorBodyWait, and
// closes it.
func errorBody(body io.ReadCloser) string {
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(body, 4096))
		got <- b
	}()
	select {
	case b := <-got:
		body.Close()
		return string(b)
	case <-time.After(errorBodyWait):
		body.Close()
		return string(<-got) + fmt.Sprintf("… (the body had not ended after %v: not read further)", errorBodyWait)
	}
}

// Stream is an open SSE response, read event by event.
type Stream struct {
	Resp *http.Response
	r    *sse.Reader
}

// Open sends req and returns its SSE stream; a non-SSE answer is an error
// carrying the status and body.
func (c *Client) Open(req *http.Request) (*Stream, error) {
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	if !IsSSE(resp) {
		return nil, &StatusError{Status: resp.StatusCode, Body: errorBody(resp.Body), ContentType: resp.Header.Get("Content-Type")}
	}
	return &Stream{Resp: resp, r: sse.NewReader(resp.Body)}, nil
}

// OpenPOST posts body on session sessionID and returns the answer's SSE
// stream (a call's notifications, then its response).
func (c *Client) OpenPOST(ctx context.Context, sessionID string, body any) (*Stream, error) {
	req, err := c.NewHTTPRequest(ctx, http.MethodPost, sessionID, body)
	if err != nil {
		return nil, err
	}
	return c.Open(req)
}

// OpenGET opens the standalone GET stream, or resumes a stream when
// lastEventID is non-empty.
func (c *Client) OpenGET(ctx context.Context, sessionID, lastEventID string) (*Stream, error) {
	req, err := c.NewHTTPRequest(ctx, http.MethodGet, sessionID, nil)
	if err != nil {
		return nil, err
	}
	if lastEventID != "" {
		req.Header.Set(HeaderLastEventID, lastEventID)
	}
	return c.Open(req)
}

// Next returns the next event; io.EOF when the server ends the stream.
func (s *Stream) Next() (sse.Event, error) { return s.r.Next() }

// Comments counts the comment lines (keep-alives) read so far.
func (s *Stream) Comments() int { return s.r.Comments }

// Close closes the stream's connection.
func (s *Stream) Close() error { return s.Resp.Body.Close() }

// IsSSE reports a text/event-stream answer.
func IsSSE(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == MediaTypeSSE
}

func truncate(b []byte) []byte {
	if len(b) > 512 {
		return append(b[:512:512], "..."...)
	}
	return b
}
