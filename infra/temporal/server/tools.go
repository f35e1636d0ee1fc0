//go:build tools

// Keeps the server's and the schema tool's main packages in this module's graph so go.sum covers them.
package tools

import (
	_ "go.temporal.io/server/cmd/server"
	_ "go.temporal.io/server/cmd/tools/sql"
)
