// The live server the tests run against: the TypeScript SDK's harness
// (memgate built from this repository, `memgate serve` on 127.0.0.1:0,
// its address and admin key read from the banner).
export { build, serve } from "../../typescript/test/harness.js";
