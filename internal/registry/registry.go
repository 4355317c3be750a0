// Package registry is a set of named things registered at init: the broken
// server fixtures and the broken client variants are both kept in one.
package registry

import (
	"fmt"
	"sort"
	"strings"
)

// Registry holds items by the unique name that name returns.
type Registry[T any] struct {
	kind  string // what an item is, for errors ("fixture")
	name  func(T) string
	items []T
}

// New returns an empty registry of kind.
func New[T any](kind string, name func(T) string) *Registry[T] {
	return &Registry[T]{kind: kind, name: name}
}

// Add registers items; a duplicate name is a programming error.
func (r *Registry[T]) Add(items ...T) {
	for _, it := range items {
		if _, ok := r.find(r.name(it)); ok {
			panic(fmt.Sprintf("registry: duplicate %s %q", r.kind, r.name(it)))
		}
		r.items = append(r.items, it)
	}
}

// All returns every item, sorted by name.
func (r *Registry[T]) All() []T {
	out := append([]T(nil), r.items...)
	sort.Slice(out, func(i, j int) bool { return r.name(out[i]) < r.name(out[j]) })
	return out
}

// Lookup finds an item by name; the error lists the known names.
func (r *Registry[T]) Lookup(name string) (T, error) {
	if it, ok := r.find(name); ok {
		return it, nil
	}
	var names []string
	for _, it := range r.All() {
		names = append(names, r.name(it))
	}
	var zero T
	return zero, fmt.Errorf("unknown %s %q; known: %s", r.kind, name, strings.Join(names, ", "))
}

func (r *Registry[T]) find(name string) (T, bool) {
	for _, it := range r.items {
		if r.name(it) == name {
			return it, true
		}
	}
	var zero T
	return zero, false
}
