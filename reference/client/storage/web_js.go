//go:build js

package storage

import (
	"errors"
	"fmt"
	"syscall/js"
)

// Web is a page's localStorage (or sessionStorage), with its keys prefixed: what the seeds'
// BrowserMcpClient keeps (session id, last event id) survives a reload of
// the page, and goes when the site's storage is cleared.
type Web struct {
	ls     js.Value
	prefix string
}

// OpenWeb opens the page's area ("localStorage", or "sessionStorage":
// this tab's alone); every key is stored as prefix+key.
func OpenWeb(area, prefix string) (*Web, error) {
	ls := js.Global().Get(area)
	if ls.IsUndefined() || ls.IsNull() {
		return nil, errors.New("this page has no " + area)
	}
	return &Web{ls: ls, prefix: prefix}, nil
}

func (w *Web) Get(key string) (string, bool) {
	v := w.ls.Call("getItem", w.prefix+key)
	if v.IsNull() {
		return "", false
	}
	return v.String(), true
}

// Set stores value; a full quota is an error, as a write that did not
// happen must be.
func (w *Web) Set(key, value string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("localStorage.setItem(%q): %v", w.prefix+key, r)
		}
	}()
	w.ls.Call("setItem", w.prefix+key, value)
	return nil
}

func (w *Web) Remove(key string) error {
	w.ls.Call("removeItem", w.prefix+key)
	return nil
}

// Clear removes this client's keys, not the rest of the origin's.
func (w *Web) Clear() error {
	var mine []string
	for i := range w.ls.Get("length").Int() {
		k := w.ls.Call("key", i)
		if !k.IsNull() && len(k.String()) >= len(w.prefix) && k.String()[:len(w.prefix)] == w.prefix {
			mine = append(mine, k.String())
		}
	}
	for _, k := range mine {
		w.ls.Call("removeItem", k)
	}
	return nil
}

// Close does nothing: localStorage has nothing to release.
func (w *Web) Close() error { return nil }
