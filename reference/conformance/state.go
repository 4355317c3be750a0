package conformance

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// requestState (SEP-2322) round-trips through the client, which may read
// or alter it, so a Sealer signs it: an HMAC-SHA256 over the state, the
// principal it was issued to and the tool or prompt that issued it, with
// an expiry. A state altered, issued to someone else, issued by another
// tool or prompt, or too old does not open.
const (
	// MaxStateBytes bounds a requestState the server will read.
	MaxStateBytes = 4 << 10
	// StateTTL is how long an issued requestState stays valid.
	StateTTL    = 10 * time.Minute
	stateDomain = "mcp-conform requestState v1"
)

// ErrBadState is the cause of every requestState that does not open.
var ErrBadState = errors.New("requestState failed its integrity check")

// Sealer seals and opens requestState values.
type Sealer struct {
	key []byte
	now func() time.Time
}

// NewSealer returns a Sealer with a fresh random key: the states it issues
// open only in this process. now is the clock (time.Now if nil).
func NewSealer(now func() time.Time) *Sealer {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("conformance: no randomness for the requestState key: " + err.Error())
	}
	if now == nil {
		now = time.Now
	}
	return &Sealer{key: key, now: now}
}

type sealed struct {
	Expires int64           `json:"exp"` // Unix milliseconds
	Value   json.RawMessage `json:"v"`
}

func (s *Sealer) mac(principal, issuer string, payload []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	for _, part := range [][]byte{[]byte(stateDomain), []byte(principal), []byte(issuer)} {
		fmt.Fprintf(h, "%d:", len(part)) // length-prefixed: no two tuples collide
		h.Write(part)
	}
	h.Write(payload)
	return h.Sum(nil)
}

// Seal returns v as a requestState for principal, issued by issuer.
func (s *Sealer) Seal(principal, issuer string, v any) (string, error) {
	value, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(sealed{Expires: s.now().Add(StateTTL).UnixMilli(), Value: value})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	state := enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(principal, issuer, payload))
	if len(state) > MaxStateBytes {
		return "", fmt.Errorf("requestState of %d bytes exceeds %d", len(state), MaxStateBytes)
	}
	return state, nil
}

// Open verifies state as issued to principal by issuer and decodes its
// value into v. Every failure wraps ErrBadState.
func (s *Sealer) Open(principal, issuer, state string, v any) error {
	if len(state) > MaxStateBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrBadState, len(state), MaxStateBytes)
	}
	body, sig, ok := strings.Cut(state, ".")
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("%w: malformed", ErrBadState)
	}
	if !hmac.Equal(mac, s.mac(principal, issuer, payload)) {
		return fmt.Errorf("%w: signature mismatch (altered, or issued to another client or by another tool)", ErrBadState)
	}
	var st sealed
	if err := json.Unmarshal(payload, &st); err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if s.now().UnixMilli() > st.Expires {
		return fmt.Errorf("%w: expired", ErrBadState)
	}
	if err := json.Unmarshal(st.Value, v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	return nil
}
