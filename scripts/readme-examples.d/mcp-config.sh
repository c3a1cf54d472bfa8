#!/usr/bin/env bash
# Connects the MCP Inspector's CLI (mcpdo, @modelcontextprotocol/inspector)
# to the server named memgate in the client configuration file $1 (the
# mcpServers JSON of Claude Desktop, Cursor and the Inspector), as a person
# would, lists its tools and runs a recall.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mcpdo="$here/node_modules/.bin/mcpdo"
export MCP_INSPECTOR_SECRET_STORE=memory
"$mcpdo" --plain --config "$1" connect memgate
trap '"$mcpdo" --plain disconnect memgate >/dev/null 2>&1 || true' EXIT
"$mcpdo" --plain --config "$1" --connection memgate tools/list
"$mcpdo" --plain --config "$1" --connection memgate tools/call recall '{"query":"What does Alice prefer?"}'
