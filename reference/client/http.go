package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/mcp-conform/mcp-conform/internal/sse"
)

// Transport header names.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

// maxBody bounds a JSON answer read into memory.
const maxBody = 16 << 20

// session is the session a request is sent with.
type session struct {
	id      string
	version string // negotiated protocol version, sent as MCP-Protocol-Version
	gen     uint64 // bumped each time the client's session is replaced
}

// message is a JSON-RPC message as it travels.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

func (m *message) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }
func (m *message) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// hasID reports whether m answers the request with the given string id.
func (m *message) hasID(id string) bool {
	var s string
	return json.Unmarshal(m.ID, &s) == nil && s == id
}

func request(id, method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

func notification(method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

// answer is the server's answer to one HTTP request: a JSON body, or an
// SSE stream to read event by event (then close it).
type answer struct {
	status int
	header http.Header
	body   []byte
	events *sse.Reader
	resp   *http.Response
	cancel context.CancelFunc // of a stream opened for a longer-lived reader
}

func (a *answer) close() {
	if a != nil && a.events != nil {
		a.resp.Body.Close()
	}
	if a != nil && a.cancel != nil {
		a.cancel()
	}
}

// send makes one HTTP request with the transport's headers and reads a
// non-stream answer whole.
func (c *Client) send(ctx context.Context, method string, sess session, body any, lastEventID string) (*answer, error) {
	return c.sendHeaders(ctx, method, sess, body, lastEventID, nil)
}

// sendHeaders is send with extra headers. A 401, or a 403 for more scopes,
// goes to the authorizer (refresh, or the authorization flow) and the
// request is sent again, once per status: a 401 answered with a token whose
// scopes then get a 403 insufficient_scope steps up once more, and no
// further. Any other 403 (a session of another principal) is the answer.
func (c *Client) sendHeaders(ctx context.Context, method string, sess session, body any, lastEventID string, extra http.Header) (*answer, error) {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	recovered := map[int]bool{}
	nonced := false
	for {
		req, resp, sent, err := c.transmit(ctx, method, sess, data, lastEventID, extra)
		if err != nil {
			return nil, err
		}
		if !nonced && c.auth.nonceRetry(req, resp) { // once: the proof now carries the nonce
			nonced = true
			resp.Body.Close()
			continue
		}
		st := resp.StatusCode
		if c.auth == nil || recovered[st] || !c.auth.answers(resp) {
			return c.read(ctx, method, resp)
		}
		recovered[st] = true
		if err := c.auth.recover(ctx, req, resp, sent); err != nil {
			if ctx.Err() != nil {
				return nil, ctxError(ctx, method)
			}
			return nil, &HTTPError{Status: resp.StatusCode, Body: err.Error()}
		}
	}
}

// transmit sends one HTTP request with the transport's headers; sent is the
// token it carried.
func (c *Client) transmit(ctx context.Context, method string, sess session, data []byte, lastEventID string, extra http.Header) (*http.Request, *http.Response, string, error) {
	var rd io.Reader
	if data != nil {
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, rd)
	if err != nil {
		return nil, nil, "", err
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	if sess.id != "" {
		req.Header.Set(headerSessionID, sess.id)
	}
	if sess.version != "" {
		req.Header.Set(headerProtocolVersion, sess.version)
	}
	if lastEventID != "" {
		req.Header.Set(headerLastEventID, lastEventID)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	tok := c.bearer()
	if err := c.setAuthorization(req, tok); err != nil {
		return nil, nil, "", err
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, "", ctxError(ctx, method)
		}
		return nil, nil, "", err
	}
	return req, resp, tok, nil
}

// read turns a response into an answer: a stream to read, or a body read
// whole.
func (c *Client) read(ctx context.Context, method string, resp *http.Response) (*answer, error) {
	a := &answer{status: resp.StatusCode, header: resp.Header, resp: resp}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" && resp.StatusCode == http.StatusOK {
		a.events = sse.NewReader(resp.Body)
		return a, nil
	}
	defer resp.Body.Close()
	var err error
	a.body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil && ctx.Err() != nil {
		return nil, ctxError(ctx, method)
	}
	return a, err
}

// gone returns the SessionGoneError of a 404 to a request that carried a
// session id, or nil.
func gone(a *answer, sess session) *SessionGoneError {
	if a.status != http.StatusNotFound || sess.id == "" {
		return nil
	}
	e := &SessionGoneError{SessionID: sess.id, NewSessionID: a.header.Get(headerSessionID)}
	var body struct {
		Error *RPCError `json:"error"`
	}
	if json.Unmarshal(a.body, &body) == nil && body.Error != nil {
		e.Envelope = body.Error
		var data struct {
			Reason string      `json:"reason"`
			Resume *ResumeHint `json:"resume"`
		}
		if json.Unmarshal(body.Error.Data, &data) == nil {
			e.Reason = data.Reason
			if data.Resume != nil && data.Resume.Method != "" && data.Resume.Via != "" {
				e.Resume = data.Resume
			}
		}
	}
	return e
}

// unexpected turns an answer the caller cannot use into an error, with the
// JSON-RPC message of the body when there is one.
func unexpected(a *answer) error {
	var body struct {
		Error *RPCError `json:"error"`
	}
	text := string(a.body)
	if json.Unmarshal(a.body, &body) == nil && body.Error != nil {
		text = body.Error.Message
		body.Error.HTTPStatus = a.status
	}
	if len(text) > 512 {
		text = text[:512] + "..."
	}
	if loc, err := a.resp.Location(); err == nil && a.status >= 300 && a.status < 400 {
		// Only a redirect the policy refused gets here (see Options.HTTPClient).
		text = fmt.Sprintf("redirect to %s not followed: it leaves the origin %s (scheme, host and port), and neither the request nor its credentials do", loc.Redacted(), origin(a.resp.Request.URL.String()))
	}
	return &HTTPError{Status: a.status, Body: text, RPC: body.Error}
}

// replayReason returns data.reason of a 400 to a GET with Last-Event-ID
// (the reference server's unreplayable-id answer), or "".
func replayReason(a *answer) string {
	if a.status != http.StatusBadRequest {
		return ""
	}
	var body struct {
		Error *struct {
			Data struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(a.body, &body) == nil && body.Error != nil {
		return body.Error.Data.Reason
	}
	return ""
}

// readJSONResponse finds the response to id in a non-stream answer.
func readJSONResponse(a *answer, id string) (*message, error) {
	var m message
	if err := json.Unmarshal(a.body, &m); err != nil {
		return nil, fmt.Errorf("decoding response: %w", err)
	}
	if !m.isResponse() || !m.hasID(id) {
		return nil, fmt.Errorf("answer is not the response to request %s: %.200s", id, a.body)
	}
	return &m, nil
}
