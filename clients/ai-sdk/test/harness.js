// The live server the tests run against: memgate built from this
// repository and started as `memgate serve` on 127.0.0.1:0, its address
// and bootstrap admin key read from the banner it prints (the approach of
// clients/typescript/test/harness.js).

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const bannerKey = "memgate: created the admin key";
const bannerServing = "memgate: serving on ";

/** Builds memgate into a new temporary directory; returns the directory and the binary. */
export function build() {
  const dir = mkdtempSync(join(tmpdir(), "memgate-ai-sdk-"));
  const bin = join(dir, "memgate");
  execFileSync("go", ["build", "-o", bin, "./cmd/memgate"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  return { dir, bin, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts `memgate serve` on a new database in dir; resolves with {url, key, stop} once it serves. */
export function serve(bin, dir, name, flags = []) {
  // The environment may name a chat model or a database: only the flags count.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MEMGATE_")));
  const child = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--db", join(dir, `${name}.db`), ...flags], {
    env, stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b) => { stderr = (stderr + b).slice(-4000); });
  return new Promise((resolvePromise, reject) => {
    let key = "", keyNext = false, started = false;
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (keyNext) {
        key = line.trim();
        keyNext = false;
      } else if (line.startsWith(bannerKey)) {
        keyNext = true;
      } else if (line.startsWith(bannerServing) && !started) {
        started = true;
        const url = line.slice(bannerServing.length).replace(/\/+$/, "");
        resolvePromise({ url, key, stop: () => stop(child) });
      }
    });
    child.on("exit", (code) => {
      if (!started) reject(new Error(`memgate serve exited (${code}) before serving:\n${stderr}`));
    });
  });
}

function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((res) => {
    child.once("exit", res);
    child.kill("SIGTERM");
  });
}
