package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func registerResources(srv *mcp.Server) {
	static := func(r *mcp.Resource, contents *mcp.ResourceContents) {
		srv.AddResource(r, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{contents}}, nil
		})
	}
	static(&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
		&mcp.ResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."})
	static(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a 1x1 PNG).", MIMEType: "image/png"},
		&mcp.ResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: pngPixel})
	static(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients may subscribe to.", MIMEType: "text/plain"},
		&mcp.ResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content."})

	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "Data for an id, substituted into the content.", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id, ok := strings.CutPrefix(req.Params.URI, "test://template/")
			if id, ok = strings.CutSuffix(id, "/data"); !ok || id == "" || strings.Contains(id, "/") {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: req.Params.URI, MIMEType: "application/json",
				Text: fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id),
			}}}, nil
		})
}
