// The live server the tests run against: the TypeScript SDK's harness
// (memgate built from this repository, `memgate serve` on 127.0.0.1:0,
// its address and admin key read from the banner), built and served once.

import { build, serve } from "../../typescript/test/harness.js";

/** Builds memgate and serves it on a new database; resolves with {url, key, stop}. */
export async function start() {
  const b = build();
  try {
    const s = await serve(b.bin, b.dir, "lg");
    return { url: s.url, key: s.key, stop: async () => { await s.stop(); b.cleanup(); } };
  } catch (err) {
    b.cleanup();
    throw err;
  }
}
