/**
 * The one HTML shell of every Torch Doctor webview (check results, gradient flow, shape trace):
 * a Content-Security-Policy with a fresh nonce, the stylesheets, an empty <main id="app"> and
 * the scripts, each with the nonce. No data: views arrive with postMessage and the pages write
 * them with textContent. Pure logic, no `vscode` import.
 */
import { randomBytes } from 'node:crypto';

/** 24 base64 characters from a CSPRNG; a new one for every page. */
export function makeNonce(): string {
  return randomBytes(18).toString('base64');
}

/** Nothing by default; styles and images from the extension only; scripts only with the nonce. */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
  ].join('; ');
}

export function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface ShellOptions {
  /** webview.cspSource. */
  cspSource: string;
  nonce: string;
  /** In load order (media/dom.js first); each gets the nonce. */
  scriptUris: string[];
  styleUris: string[];
  title: string;
  /** Announce the page's updates to screen readers (aria-live="polite" on <main>). */
  live?: boolean;
}

/**
 * The page. Every argument comes from VS Code (cspSource, asWebviewUri), makeNonce or our
 * own titles; all are escaped anyway.
 */
export function webviewHtml(opts: ShellOptions): string {
  const csp = escapeAttr(contentSecurityPolicy(opts.cspSource, opts.nonce));
  const styles = opts.styleUris.map((u) => `<link rel="stylesheet" href="${escapeAttr(u)}">`).join('\n');
  const scripts = opts.scriptUris
    .map((u) => `<script nonce="${escapeAttr(opts.nonce)}" src="${escapeAttr(u)}"></script>`)
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${styles}
<title>${escapeAttr(opts.title)}</title>
</head>
<body>
<main id="app"${opts.live ? ' aria-live="polite"' : ''}></main>
${scripts}
</body>
</html>
`;
}
