// The live server the tests run against: memgate built from this
// repository and started as `memgate serve` on 127.0.0.1:0, its address and
// bootstrap admin key read from the banner it prints (internal/serveout).
// The same approach as clients/typescript/test/harness.js.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const bannerKey = "memgate: created the admin key";
const bannerServing = "memgate: serving on ";

/** Builds memgate and serves it on a new database; resolves with {url, key, stop}. */
export async function start() {
  const dir = mkdtempSync(join(tmpdir(), "memgate-lg-"));
  const bin = join(dir, "memgate");
  execFileSync("go", ["build", "-o", bin, "./cmd/memgate"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  // The environment may name a chat model or a database: only the flags count.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MEMGATE_")));
  const child = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--db", join(dir, "lg.db")], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (b) => { stderr = (stderr + b).slice(-4000); });
  const stop = () => new Promise((res) => {
    const done = () => { rmSync(dir, { recursive: true, force: true }); res(); };
    if (child.exitCode !== null) return done();
    child.once("exit", done);
    child.kill("SIGTERM");
  });
  return new Promise((res, reject) => {
    let key = "", keyNext = false, started = false;
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (keyNext) {
        key = line.trim();
        keyNext = false;
      } else if (line.startsWith(bannerKey)) {
        keyNext = true;
      } else if (line.startsWith(bannerServing) && !started) {
        started = true;
        res({ url: line.slice(bannerServing.length).replace(/\/+$/, ""), key, stop });
      }
    });
    child.on("exit", (code) => {
      if (!started) reject(new Error(`memgate serve exited (${code}) before serving:\n${stderr}`));
    });
  });
}
