import { spawn } from "node:child_process";

/**
 * Opens `url` in a browser without waiting for it: the command in BROWSER when set (run with the
 * URL as its one argument), else `open` on macOS and `xdg-open` elsewhere. Failures are ignored:
 * the URL is also printed for the person to open.
 */
export function openBrowser(url: string): void {
  const command = process.env.BROWSER || (process.platform === "darwin" ? "open" : "xdg-open");
  try {
    const child = spawn(command, [url], { detached: true, stdio: "ignore" });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // the printed URL remains
  }
}
