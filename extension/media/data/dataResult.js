// @ts-check
// Torch Doctor: the data-check page. Plain JS, no framework, nothing remote.
// It draws the DataPageView that extension/src/data/dataView.ts builds and the panel posts
// ({type: 'render', view}): verdict cards, a grid of the batch's images drawn on canvases from the
// view's uint8 arrays (blank samples outlined, the label under each; a page of them at a time,
// Previous/Next), per-channel value histograms as bars, label bar charts and the per-split table. Every string goes in with textContent or setAttribute, never as HTML; the DOM
// helpers are media/dom.js (loaded first). The view is kept with setState.
(function () {
  'use strict';

  const vscode = acquireVsCodeApi();
  const app = document.getElementById('app');
  const { h, textParts, linkButton } = window.TorchDoctorDom;
  /** Images are drawn about this many CSS pixels a side (whole multiples of their size). */
  const TILE = 64;

  function button(label, onclick, props) {
    return h('button', Object.assign({ type: 'button', class: 'btn', text: label, onclick: onclick }, props || {}));
  }

  function openSource(src) {
    if (src) {
      vscode.postMessage({ type: 'openLocation', file: src.file, line: src.line });
    }
  }

  function sourceButton(src, props) {
    return linkButton(src.label, () => openSource(src), Object.assign({ class: 'link source', title: 'Open ' + src.file + ':' + src.line }, props || {}));
  }

  function section(id, title, children, extraClass) {
    return h('section', { id: id, class: 'section ' + (extraClass || ''), 'aria-labelledby': id + '-title' }, [
      h('h2', { id: id + '-title', text: title }),
      children,
    ]);
  }

  function render(view) {
    app.replaceChildren();
    if (!view || !view.kind) {
      document.body.dataset.state = 'empty';
      app.appendChild(h('p', { class: 'placeholder', text: 'Waiting for a data check…' }));
      return;
    }
    document.body.dataset.state = view.kind;
    document.body.dataset.verdict = view.verdict ? view.verdict.label : '';
    app.appendChild(renderHeader(view));
    if (view.kind === 'running') {
      app.appendChild(h('div', { class: 'running' }, [h('p', { class: 'headline', id: 'headline', text: view.message }), h('p', { class: 'muted', text: view.hint })]));
      return;
    }
    if (view.kind === 'message') {
      app.appendChild(h('p', { class: 'headline', id: 'headline' }, textParts(view.message)));
      return;
    }
    renderResult(view);
  }

  function renderHeader(view) {
    const hd = view.header;
    const v = view.verdict;
    const badge = h('span', { id: 'verdict', class: 'badge tone-' + v.tone, 'data-verdict': v.label, role: 'status' }, [
      v.tone === 'running' ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : h('span', { class: 'badge-icon', 'aria-hidden': 'true', text: v.icon }),
      h('span', { class: 'badge-label', text: v.label }),
    ]);
    const actions = h('div', { class: 'actions' });
    if (view.kind !== 'running') {
      actions.appendChild(button('Run again', () => vscode.postMessage({ type: 'rerun' }), { id: 'rerun', title: 'Check the data again' }));
    }
    if (view.kind === 'result' && view.canExportCsv) {
      actions.appendChild(
        button('Export flagged samples (CSV)…', () => vscode.postMessage({ type: 'exportCsv' }), { id: 'export-csv', title: 'Save kind, severity, split and index of every flagged sample' }),
      );
    }
    return h('header', { class: 'header' }, [
      h('div', { class: 'title-row' }, [
        h('h1', {}, [h('span', { class: 'check-title', text: hd.title }), h('span', { class: 'sep', 'aria-hidden': 'true', text: ' · ' }), h('span', { class: 'class-name', text: hd.target })]),
        badge,
      ]),
      hd.file ? h('div', { class: 'subtitle' }, [h('span', { class: 'file', title: hd.file, text: hd.file })]) : null,
      actions.childElementCount ? actions : null,
    ]);
  }

  function renderResult(view) {
    const length = view.headline.reduce((n, p) => n + p.text.length, 0);
    app.appendChild(h('p', { class: length > 160 ? 'headline long' : 'headline', id: 'headline' }, textParts(view.headline)));
    if (view.error) {
      app.appendChild(
        h('section', { id: 'error', class: 'error-block', role: 'group', 'aria-label': 'Error: ' + view.error.kindLabel }, [
          h('p', { class: 'error-kind' }, [h('span', { class: 'badge-icon', 'aria-hidden': 'true', text: '⊘ ' }), view.error.kindLabel]),
          view.error.detail ? h('details', { class: 'error-detail' }, [h('summary', { text: 'Details' }), h('pre', { class: 'traceback' }, h('code', { text: view.error.detail }))]) : null,
        ]),
      );
    }
    if (view.snippet) {
      app.appendChild(renderSnippet(view.snippet));
    }
    if (view.cards.length) {
      app.appendChild(section('findings', 'Findings', h('div', { class: 'cards' }, view.cards.map(renderCard))));
    }
    view.galleries.forEach((g, i) => app.appendChild(renderGallery(g, i)));
    if (view.histograms && view.histograms.length) {
      app.appendChild(section('histograms', 'Values per channel', view.histograms.map(renderHistograms)));
    }
    if (view.labels.length) {
      app.appendChild(section('labels', 'Labels', view.labels.map(renderLabels)));
    }
    if (view.splits) {
      app.appendChild(renderSplits(view.splits));
    }
    if (view.notes.length) {
      app.appendChild(section('notes', 'What Torch Doctor assumed', h('ul', { class: 'assumed' }, view.notes.map((p) => h('li', {}, textParts(p))))));
    }
    if (view.footer) {
      app.appendChild(h('footer', { class: 'footer', id: 'footer', text: view.footer }));
    }
  }

  function renderSnippet(snippet) {
    return section('snippet', 'Code to add', [
      h('p', { class: 'muted', text: 'Add this function to the file and fill in the "...": it says how to build each split.' }),
      h('div', { class: 'snippet-box' }, [
        h('pre', {}, h('code', { text: snippet })),
        h('div', { class: 'snippet-actions' }, button('Copy', () => vscode.postMessage({ type: 'copySnippet' }), { id: 'copy-snippet', class: 'btn primary' })),
      ]),
    ]);
  }

  function part(label, parts) {
    return parts.length ? [h('dt', { text: label }), h('dd', {}, textParts(parts))] : [];
  }

  function renderCard(c) {
    return h('article', { class: 'card tone-' + c.tone, 'data-kind': c.kind, 'aria-label': c.title + ' (' + c.severity + ') in ' + c.split }, [
      h('h3', { class: 'card-title' }, [
        h('span', { class: 'chip tone-' + c.tone, text: c.severity === 'error' ? '✗ error' : '! warning' }),
        h('span', { text: c.title }),
        h('span', { class: 'muted split-name', text: 'in ' + c.split }),
      ]),
      h('dl', { class: 'card-parts' }, [].concat(part('What was seen', c.seen), part('Likely cause', c.cause), part('Next step', c.next))),
      c.indicesText ? h('p', { class: 'indices' }, [h('span', { class: 'muted', text: 'Samples: ' }), h('span', { class: 'index-list', text: c.indicesText })]) : null,
      c.source ? h('p', { class: 'card-source' }, [h('span', { class: 'muted', text: 'Source: ' }), sourceButton(c.source)]) : null,
    ]);
  }

  /** The uint8 values of a base64 string (the gallery's `pixels`). */
  function bytesOf(b64) {
    const text = atob(b64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) {
      out[i] = text.charCodeAt(i);
    }
    return out;
  }

  /** An image from its H x W x C uint8 values, base64 (C = 1: grey, 3: RGB). */
  function drawImage(canvas, g, b64) {
    const ctx = canvas.getContext('2d');
    if (!ctx) {
      return;
    }
    const pixels = bytesOf(b64);
    const data = ctx.createImageData(g.width, g.height);
    const out = data.data;
    const n = g.width * g.height;
    for (let p = 0; p < n; p++) {
      const o = p * 4;
      if (g.channels === 1) {
        out[o] = out[o + 1] = out[o + 2] = pixels[p];
      } else {
        out[o] = pixels[p * 3];
        out[o + 1] = pixels[p * 3 + 1];
        out[o + 2] = pixels[p * 3 + 2];
      }
      out[o + 3] = 255;
    }
    ctx.putImageData(data, 0, 0);
  }

  function renderTile(g, scale, im) {
    const canvas = /** @type {HTMLCanvasElement} */ (h('canvas', { width: String(g.width), height: String(g.height), class: 'px', 'aria-hidden': 'true' }));
    canvas.style.width = g.width * scale + 'px';
    canvas.style.height = g.height * scale + 'px';
    drawImage(canvas, g, im.pixels);
    const marks = [im.blank ? 'blank' : '', im.nonfinite ? 'NaN/Inf' : ''].filter(Boolean);
    const cls = ['tile', im.blank ? 'blank' : '', im.nonfinite ? 'nonfinite' : '', im.flagged ? 'flagged' : ''].join(' ').replace(/\s+/g, ' ').trim();
    return h('figure', { class: cls, role: 'listitem', 'data-index': String(im.index), 'aria-label': 'Sample ' + im.caption + (marks.length ? ', ' + marks.join(', ') : '') }, [
      canvas,
      h('figcaption', {}, [h('span', { class: 'caption', text: im.caption }), marks.length ? h('span', { class: 'tile-mark', text: marks.join(' · ') }) : null]),
    ]);
  }

  /** The page of each grid shown (split → page index), while the page lives; clamped to the pages. */
  const pageOf = {};

  function renderGallery(g, i) {
    const scale = Math.max(1, Math.floor(TILE / Math.max(g.width, g.height)));
    const pages = g.pages && g.pages.length ? g.pages : [{ start: 0, end: g.images.length, label: '' }];
    const grid = h('div', { class: 'grid', role: 'list', 'data-split': g.split });
    const label = h('span', { class: 'page-label', 'aria-live': 'polite' });
    const prev = /** @type {HTMLButtonElement} */ (button('‹ Previous', () => show(pageOf[g.split] - 1), { class: 'btn page-prev', title: 'Previous images' }));
    const next = /** @type {HTMLButtonElement} */ (button('Next ›', () => show(pageOf[g.split] + 1), { class: 'btn page-next', title: 'Next images' }));
    function show(p) {
      const k = Math.max(0, Math.min(pages.length - 1, p || 0));
      pageOf[g.split] = k;
      grid.replaceChildren(...g.images.slice(pages[k].start, pages[k].end).map((im) => renderTile(g, scale, im)));
      label.textContent = 'Images ' + pages[k].label;
      prev.disabled = k === 0;
      next.disabled = k === pages.length - 1;
      grid.dataset.page = String(k);
    }
    show(pageOf[g.split]);
    const pager = pages.length > 1 ? h('div', { class: 'pager', role: 'group', 'aria-label': 'Pages of ' + g.split, 'data-pages': String(pages.length) }, [prev, label, next]) : null;
    return section('gallery-' + i, 'Images of ' + g.split, [
      h('p', { class: 'muted gallery-caption', text: g.caption }),
      pager,
      grid,
      h('p', { class: 'muted note', text: g.scaleNote + (g.dropped ? ' ' + g.dropped + ' images with malformed pixels were left out.' : '') }),
    ], 'gallery');
  }

  function renderHistogram(c) {
    const bars = c.heights.map((v, k) => {
      const bar = h('div', { class: 'hist-bar' + (c.counts[k] > 0 ? ' nonzero' : ''), title: c.titles[k] });
      bar.style.height = (v * 100).toFixed(1) + '%';
      return bar;
    });
    return h('figure', { class: 'histogram' + (c.tint ? ' tint-' + c.tint : ''), 'data-channel': c.channel, 'aria-label': 'Histogram of ' + c.channel + ': ' + c.summary }, [
      h('div', { class: 'hist-bars', 'aria-hidden': 'true' }, bars),
      h('div', { class: 'hist-axis muted', 'aria-hidden': 'true' }, [h('span', { text: c.lowText }), h('span', { text: c.highText })]),
      h('figcaption', {}, [h('span', { class: 'hist-channel', text: c.channel }), h('span', { class: 'muted', text: ' · ' + c.summary })]),
    ]);
  }

  function renderHistograms(s) {
    return h('div', { class: 'split-histograms', 'data-split': s.split }, [
      h('h3', { text: s.split }),
      h('p', { class: 'muted', text: s.caption }),
      h('div', { class: 'histograms' }, s.channels.map(renderHistogram)),
    ]);
  }

  function renderLabels(chart) {
    const rows = chart.bars.map((b) => {
      const fill = h('div', { class: 'bar-fill' });
      fill.style.width = (b.width * 100).toFixed(1) + '%';
      return h('div', { class: 'bar-row', role: 'listitem' }, [
        h('span', { class: 'bar-label', text: b.label }),
        h('div', { class: 'bar-track', 'aria-hidden': 'true' }, fill),
        h('span', { class: 'bar-count', text: b.count + ' (' + (b.share * 100).toFixed(1) + '%)' }),
      ]);
    });
    return h('div', { class: 'label-chart', 'data-split': chart.split }, [
      h('h3', { text: chart.split + ' · ' + chart.total + ' labels' + (chart.more ? ' (' + chart.more + ' more classes not drawn)' : '') }),
      h('div', { class: 'bars', role: 'list' }, rows),
    ]);
  }

  function renderSplits(t) {
    const head = h('tr', {}, t.columns.concat(['Source']).map((c, i) => h('th', { scope: 'col', class: t.numeric[i] ? 'num' : null, text: c })));
    const body = t.rows.map((r) =>
      h('tr', { class: r.flagged ? 'flagged-row' : null }, [
        r.cells.map((c, i) => h('td', { class: t.numeric[i] ? 'num' : null, text: c })),
        h('td', {}, r.source ? sourceButton(r.source) : '—'),
      ]),
    );
    return section('splits', 'Splits', h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Splits' }, h('table', { class: 'data', id: 'split-table' }, [h('thead', {}, head), h('tbody', {}, body)])));
  }

  window.addEventListener('message', (event) => {
    const msg = event.data;
    if (msg && msg.type === 'render' && msg.view && typeof msg.view === 'object') {
      vscode.setState({ view: msg.view });
      render(msg.view);
    }
  });

  const saved = vscode.getState();
  render(saved && saved.view ? saved.view : null);
  vscode.postMessage({ type: 'ready' });
})();
