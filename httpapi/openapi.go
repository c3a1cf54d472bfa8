package httpapi

import _ "embed"

// openAPIDocument is the OpenAPI 3.1 description of the routes, served at
// /openapi.json. A test holds it equal to the routes New registers (paths,
// methods and the roles auth.Allowed admits) and its request schemas equal
// to the fields the handlers decode.
//
//go:embed openapi.json
var openAPIDocument []byte
