package client_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The reference client as a library: durable storage, connect (rejoining
// a stored session or starting one), a call, and an explicit disconnect.
// Here the server is a reference server on a free loopback port.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	host, err := server.NewHost(server.Config{}, ln, server.HostOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer host.Close()

	ctx := context.Background()
	st := storage.NewMemory() // or storage.Open(dir): survives a restart
	c, err := client.New(client.Options{
		URL:     host.URL(),
		Storage: st,
		OnStatus: func(ev client.StatusEvent) {
			fmt.Println("status:", ev.Status)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil { // rejoin or start; opens the GET stream
		log.Fatal(err)
	}
	res, err := c.CallTool(ctx, "long_operation", map[string]any{"steps": 2, "interval_ms": 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("result:", res.Result.Content[0].(*mcp.TextContent).Text)
	// After a restart, c.ResumeCall(ctx) reattaches to a call in flight.
	if err := c.Disconnect(ctx, client.DisconnectOptions{ClearSession: true}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// status: connecting
	// status: connected
	// result: completed 2 steps
	// status: disconnected
}
