// Builds the SDK this package depends on (file:../typescript): on a fresh
// clone it has no dist/ yet, so its dev dependencies are installed once
// (npm ci) and it is compiled before this package is.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const sdk = fileURLToPath(new URL("../../typescript/", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (...args) => execFileSync(npm, args, { cwd: sdk, stdio: ["ignore", "inherit", "inherit"] });
if (!existsSync(new URL("node_modules/typescript/package.json", `file://${sdk}`))) run("ci", "--no-audit", "--no-fund");
run("run", "build", "--silent");
