// src/schema.d.ts is generated from httpapi/openapi.json and committed:
// this fails when the two drift apart (regenerate with `npm run gen`).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");

test("src/schema.d.ts is what openapi-typescript makes of httpapi/openapi.json", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "memgate-ts-schema-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, "schema.d.ts");
  const cli = join(dirname(createRequire(import.meta.url).resolve("openapi-typescript/package.json")), "bin", "cli.js");
  execFileSync(process.execPath, [cli, join(pkg, "../../httpapi/openapi.json"), "-o", out], { cwd: pkg, stdio: ["ignore", "ignore", "inherit"] });
  const want = readFileSync(out, "utf8");
  const got = readFileSync(join(pkg, "src/schema.d.ts"), "utf8");
  assert.ok(want.includes("export interface operations"), "openapi-typescript wrote no operations");
  assert.ok(got === want, "src/schema.d.ts differs from httpapi/openapi.json: run `npm run gen` in clients/typescript and commit it");
});
