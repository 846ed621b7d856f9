// The one HTML shell of every webview (extension/src/webview/html.ts): CSP, nonce, nothing inline or remote.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { contentSecurityPolicy, makeNonce, webviewHtml } from '../../../../extension/src/webview/html';

test('HTML shell: the CSP, a nonce on the one script, no data and no remote resources', () => {
  const nonce = makeNonce();
  assert.match(nonce, /^[A-Za-z0-9+/]{24}$/);
  assert.notEqual(nonce, makeNonce());
  const src = 'https://file+.vscode-resource.vscode-cdn.net';
  const html = webviewHtml({
    cspSource: src,
    nonce,
    scriptUris: [`${src}/ext/extension/media/checkResult.js`],
    styleUris: [`${src}/ext/extension/media/checkResult.css`],
    title: 'Torch Doctor check result',
    live: true,
  });
  assert.equal(
    contentSecurityPolicy(src, nonce),
    `default-src 'none'; style-src ${src}; script-src 'nonce-${nonce}'; img-src ${src} data:`,
  );
  assert.ok(html.includes(`content="default-src 'none'; style-src ${src}; script-src 'nonce-${nonce}'; img-src ${src} data:"`));
  const scripts = html.match(/<script\b[^>]*>/g) ?? [];
  assert.equal(scripts.length, 1);
  assert.ok(scripts[0].includes(`nonce="${nonce}"`));
  assert.ok(!/style=/.test(html), 'no inline styles (the CSP forbids them)');
  for (const url of html.match(/(?:src|href)="([^"]+)"/g) ?? []) {
    assert.ok(url.includes(src), `only webview resources: ${url}`);
  }
  const hostile = webviewHtml({ cspSource: src, nonce: '"><script>', scriptUris: ['a"b'], styleUris: ['c'], title: 't' });
  assert.ok(!hostile.includes('"><script>'));
});

test('webviewHtml (model views): a CSP with the nonce, scripts only with it, no data, everything escaped', () => {
  const html = webviewHtml({
    cspSource: 'vscode-resource:',
    nonce: 'N0nce+/=',
    scriptUris: ['https://file+.vscode-resource/x/modelViewPage.js', 'https://file+.vscode-resource/x/gradientFlow.js?a=1&b="2"'],
    styleUris: ['https://file+.vscode-resource/x/modelViewPage.css'],
    title: 'Gradient <Flow>',
  });
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src vscode-resource:; script-src 'nonce-N0nce\+\/='; img-src vscode-resource: data:">/);
  const scripts = html.match(/<script[^>]*>/g) ?? [];
  assert.equal(scripts.length, 2);
  for (const s of scripts) {
    assert.match(s, /^<script nonce="N0nce\+\/=" src="[^"]+">$/);
  }
  assert.ok(html.includes('gradientFlow.js?a=1&amp;b=&quot;2&quot;'));
  assert.ok(html.includes('<title>Gradient &lt;Flow&gt;</title>'));
  assert.ok(!/<script[^>]*>[^<]/.test(html), 'no inline script');
  assert.ok(!/style=/.test(html), 'no inline style');
  assert.ok(!/https?:\/\/(?!file\+)/.test(html), 'nothing remote');
});
