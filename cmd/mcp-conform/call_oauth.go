package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// defaultRedirect is where the browser comes back after authorizing:
// call listens there while the flow runs.
const defaultRedirect = "http://127.0.0.1:8976/callback"

// oauthFlags configure call's authorization flow.
type oauthFlags struct {
	on, headless                     bool
	redirect, clientID, clientSecret string
	clientMetadataURL                string
}

func (o *oauthFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.on, "oauth", false, "on a 401, run the MCP authorization flow (OAuth 2.1, PKCE); the tokens are kept in --state-dir and refreshed")
	fs.StringVar(&o.redirect, "oauth-redirect", defaultRedirect, "redirect URL registered for the flow; call listens there for the browser")
	fs.BoolVar(&o.headless, "oauth-headless", false, "take the code from the authorization server's redirect without a browser (servers that approve without a user)")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "pre-registered OAuth client id")
	fs.StringVar(&o.clientSecret, "oauth-client-secret", "", "its secret, if it has one")
	fs.StringVar(&o.clientMetadataURL, "oauth-client-metadata-url", "", "https URL of the client's id metadata document, used as client id where the server supports it")
}

// check validates the flags.
func (o *oauthFlags) check() error {
	if !o.on {
		if o.headless || o.redirect != defaultRedirect || o.clientID != "" || o.clientSecret != "" || o.clientMetadataURL != "" {
			return fmt.Errorf("the --oauth-* flags need --oauth")
		}
		return nil
	}
	if u, err := url.Parse(o.redirect); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--oauth-redirect must be an http(s) URL, got %q", o.redirect)
	}
	if o.clientSecret != "" && o.clientID == "" {
		return fmt.Errorf("--oauth-client-secret needs --oauth-client-id")
	}
	if u, err := url.Parse(o.clientMetadataURL); o.clientMetadataURL != "" && (err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/") {
		return fmt.Errorf("--oauth-client-metadata-url must be an https URL with a path, got %q", o.clientMetadataURL)
	}
	return nil
}

// apply sets the client's OAuth options; the authorization URL goes to
// stderr for the user to open.
func (o *oauthFlags) apply(opts *client.Options, stderr io.Writer) {
	if !o.on {
		return
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
		opts.HTTPClient = hc
	}
	authorize := client.LoopbackAuthorize(o.redirect, func(u string) {
		fmt.Fprintf(stderr, "mcp-conform call: open this URL to authorize, then come back:\n%s\n", u)
	})
	if o.headless {
		authorize = client.HeadlessAuthorize(hc)
	}
	opts.OAuth = &client.OAuthOptions{RedirectURL: o.redirect, Authorize: authorize, ClientID: o.clientID,
		ClientSecret: o.clientSecret, ClientMetadataURL: o.clientMetadataURL, ClientName: "mcp-conform call"}
}
