// @ts-check
// Torch Doctor: the check-result page. Plain JS, no framework, nothing remote.
// It draws the PageView that extension/src/checks/checkResultModel.ts builds and the panel posts
// ({type: 'render', view}); every string goes in with textContent or setAttribute, never as HTML.
// The DOM helpers are media/dom.js (loaded first). The view is kept with setState, so the page
// redraws itself when the panel is shown again.
(function () {
  'use strict';

  const vscode = acquireVsCodeApi();
  const app = document.getElementById('app');
  const { h, s, textParts, linkButton } = window.TorchDoctorDom;
  const { drawChart, seriesClass } = window.TorchDoctorChart;
  let chartRedraw = null;

  // ---------------------------------------------------------------------------------------
  // Controls

  function button(label, onclick, props) {
    return h('button', Object.assign({ type: 'button', class: 'btn', text: label, onclick: onclick }, props || {}));
  }

  function openTarget(target) {
    if (!target) {
      return;
    }
    vscode.postMessage({
      type: 'openLocation',
      file: target.file,
      line: target.line === undefined ? null : target.line,
      column: target.column === undefined ? null : target.column,
      symbols: target.symbols || [],
    });
  }

  function section(id, title, children, extraClass) {
    const headingId = id + '-title';
    return h('section', { id: id, class: 'section ' + (extraClass || ''), 'aria-labelledby': headingId }, [
      h('h2', { id: headingId, text: title }),
      children,
    ]);
  }

  // ---------------------------------------------------------------------------------------
  // Page

  function render(view) {
    chartRedraw = null;
    app.replaceChildren();
    if (!view || !view.kind) {
      document.body.dataset.state = 'empty';
      app.appendChild(h('p', { class: 'placeholder', text: 'Waiting for a check result…' }));
      return;
    }
    document.body.dataset.state = view.kind;
    document.body.dataset.verdict = view.verdict ? view.verdict.label : '';
    app.appendChild(renderHeader(view));
    if (view.kind === 'running') {
      app.appendChild(
        h('div', { class: 'running' }, [
          h('p', { class: 'headline', id: 'headline', text: view.message }),
          h('p', { class: 'muted', text: view.hint }),
        ]),
      );
      return;
    }
    if (view.kind === 'message') {
      app.appendChild(headline(view.message));
      return;
    }
    renderResult(view);
  }

  function renderHeader(view) {
    const hd = view.header;
    const v = view.verdict;
    const titleChildren = [h('span', { class: 'check-title', text: hd.title })];
    if (hd.className) {
      titleChildren.push(h('span', { class: 'sep', 'aria-hidden': 'true', text: ' · ' }));
      titleChildren.push(
        hd.classTarget
          ? linkButton(hd.className, () => openTarget(hd.classTarget), {
              class: 'link class-link',
              title: 'Open ' + hd.className + ' in ' + hd.fileLabel,
            })
          : h('span', { class: 'class-name', text: hd.className }),
      );
    }
    const badge = h(
      'span',
      { id: 'verdict', class: 'badge tone-' + v.tone, 'data-verdict': v.label, role: 'status' },
      [
        v.tone === 'running'
          ? h('span', { class: 'spinner', 'aria-hidden': 'true' })
          : h('span', { class: 'badge-icon', 'aria-hidden': 'true', text: v.icon }),
        h('span', { class: 'badge-label', text: v.label }),
      ],
    );
    const actions = h('div', { class: 'actions' });
    if ((view.kind === 'result' || view.kind === 'message') && view.canRerun) {
      actions.appendChild(
        button('Run again', () => vscode.postMessage({ type: 'rerun' }), { id: 'rerun', title: 'Run the ' + hd.title + ' again' }),
      );
    }
    if (view.kind === 'result' && view.canExportCsv) {
      actions.appendChild(
        button('Export CSV…', () => vscode.postMessage({ type: 'exportCsv' }), {
          id: 'export-csv',
          title: 'Save the sweep as lr,loss,smoothed_loss',
        }),
      );
    }
    return h('header', { class: 'header' }, [
      h('div', { class: 'title-row' }, [h('h1', {}, titleChildren), badge]),
      hd.file
        ? h('div', { class: 'subtitle' }, [h('span', { class: 'file', title: hd.file, text: hd.file })])
        : null,
      actions.childElementCount ? actions : null,
    ]);
  }

  function headline(parts) {
    const length = parts.reduce((n, p) => n + p.text.length, 0);
    return h('p', { class: length > 160 ? 'headline long' : 'headline', id: 'headline' }, textParts(parts));
  }

  function renderResult(view) {
    app.appendChild(headline(view.headline));
    if (view.sentences.length) {
      app.appendChild(
        h(
          'ul',
          { class: 'sentences', id: 'sentences' },
          view.sentences.map((p) => h('li', {}, textParts(p))),
        ),
      );
    }
    if (view.error) {
      app.appendChild(renderError(view.error));
    }
    if (view.snippet) {
      app.appendChild(renderSnippet(view));
    }
    if (view.curve) {
      app.appendChild(renderCurve(view.curve));
    }
    if (view.table) {
      app.appendChild(renderTable(view.table));
    }
    if (view.inferred.length || view.example) {
      const items = view.inferred.map((p) => h('li', {}, textParts(p)));
      app.appendChild(
        section('inferred', 'What Torch Doctor assumed', [
          items.length ? h('ul', { class: 'assumed' }, items) : null,
          view.example ? h('p', { class: 'example', text: view.example }) : null,
        ]),
      );
    }
    if (view.details.length) {
      app.appendChild(
        h('details', { class: 'numbers', id: 'numbers' }, [
          h('summary', { text: 'Numbers' }),
          h(
            'table',
            { class: 'kv' },
            h(
              'tbody',
              {},
              view.details.map((kv) => h('tr', {}, [h('th', { scope: 'row', text: kv[0] }), h('td', { text: kv[1] })])),
            ),
          ),
        ]),
      );
    }
    if (view.footer) {
      app.appendChild(h('footer', { class: 'footer', id: 'footer', text: view.footer }));
    }
  }

  function renderError(err) {
    const children = [h('p', { class: 'error-kind' }, [h('span', { class: 'badge-icon', 'aria-hidden': 'true', text: '⊘ ' }), err.kindLabel])];
    if (err.message) {
      children.push(h('p', { class: 'error-message' }, textParts(err.message)));
    }
    if (err.location) {
      const loc = err.location;
      children.push(
        h('p', {}, [
          linkButton('Go to ' + loc.label, () => openTarget(loc), { class: 'link goto', id: 'error-location' }),
        ]),
      );
    }
    if (err.detail) {
      const userFrames = err.frames.filter((f) => f.user);
      children.push(
        // A short detail (a syntax error's line and caret) is shown open; a traceback folded.
        h('details', { class: 'error-detail', open: !err.frames.length && err.detail.split('\n').length <= 4 }, [
          h('summary', { text: err.frames.length ? 'Traceback' : 'Details' }),
          userFrames.length
            ? h('div', { class: 'frames' }, [
                h('span', { class: 'muted', text: 'In your code: ' }),
                userFrames
                  .slice()
                  .reverse()
                  .map((f) =>
                    linkButton(f.label, () => openTarget({ file: f.file, line: f.line }), { class: 'link frame', title: f.file + ':' + f.line }),
                  ),
              ])
            : null,
          h('pre', { class: 'traceback' }, h('code', { text: err.detail })),
        ]),
      );
    }
    return h('section', { id: 'error', class: 'error-block', role: 'group', 'aria-label': 'Error: ' + err.kindLabel }, children);
  }

  function renderSnippet(view) {
    const copy = button('Copy', () => {
      vscode.postMessage({ type: 'copySnippet' });
      copy.textContent = 'Copied ✓';
      setTimeout(() => {
        copy.textContent = 'Copy';
      }, 1500);
    }, { id: 'copy-snippet', class: 'btn primary', title: 'Copy the code to the clipboard' });
    return section('snippet', 'Code to add', [
      h('p', { class: 'muted', text: view.snippetHint }),
      h('div', { class: 'snippet-box' }, [h('pre', {}, h('code', { text: view.snippet })), h('div', { class: 'snippet-actions' }, copy)]),
    ]);
  }

  // ---------------------------------------------------------------------------------------
  // Table

  function renderTable(t) {
    const marker = t.errorRow !== null;
    const head = h('tr', {}, [
      marker ? h('th', { scope: 'col', class: 'marker' }, h('span', { class: 'sr-only', text: 'failed here' })) : null,
      t.columns.map((c, i) => h('th', { scope: 'col', class: t.numeric[i] ? 'num' : null, text: c })),
    ]);
    const body = t.rows.map((row) => {
      const cls = [row.error ? 'error-row' : '', row.target ? 'has-target' : ''].join(' ').trim();
      const open = () => openTarget(row.target);
      const tr = h(
        'tr',
        {
          class: cls || null,
          tabindex: row.target ? '0' : null,
          title: row.action ? row.action + ' (Enter)' : null,
          onclick: row.target ? open : null,
          onkeydown: row.target
            ? (e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  open();
                }
              }
            : null,
        },
        [
          marker
            ? h('td', { class: 'marker' }, row.error ? [h('span', { 'aria-hidden': 'true', text: '✗' }), h('span', { class: 'sr-only', text: 'The check failed here' })] : null)
            : null,
          row.cells.map((c, i) => {
            const td = h('td', {
              class: [t.numeric[i] ? 'num' : '', c.tone ? 'cell-tone tone-' + c.tone : '', i === 0 && row.depth ? 'indent' : '']
                .join(' ')
                .trim() || null,
              text: c.text,
            });
            if (i === 0 && row.depth) {
              td.style.setProperty('--depth', String(row.depth));
            }
            return td;
          }),
        ],
      );
      return tr;
    });
    return section(
      'table',
      t.caption,
      h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': t.caption }, h('table', { class: 'data', id: 'result-table' }, [h('thead', {}, head), h('tbody', {}, body)])),
    );
  }

  // ---------------------------------------------------------------------------------------
  // Chart: an inline SVG line chart (log or linear x, optional right axis, gaps, marks)

  function renderCurve(curve) {
    const title = cap(curve.y.label) + ' vs ' + curve.x.label;
    if (curve.empty) {
      return section('curve', title, h('p', { class: 'muted empty-chart', text: curve.emptyText }), 'chart-section');
    }
    const holder = h('div', { class: 'chart', id: 'chart' });
    const legend = h(
      'ul',
      { class: 'legend', id: 'legend' },
      curve.series
        .map((sr, i) =>
          h('li', {}, [
            s('svg', { width: '28', height: '10', 'aria-hidden': 'true', class: 'swatch' }, [
              s('line', { x1: '1', y1: '5', x2: '27', y2: '5', class: seriesClass(sr, i) }),
            ]),
            h('span', { text: sr.legend }),
          ]),
        )
        .concat(
          curve.marks.map((m, i) =>
            h('li', {}, [
              s('svg', { width: '28', height: '10', 'aria-hidden': 'true', class: 'swatch' }, [
                s('line', { x1: '1', y1: '5', x2: '27', y2: '5', class: 'mark m-' + (i % 3) }),
              ]),
              h('span', { text: m.label }),
            ]),
          ),
        ),
    );
    const fig = h('figure', { class: 'figure' }, [holder, h('figcaption', {}, legend)]);
    const out = section('curve', title, [fig, curve.note ? h('p', { class: 'muted note', text: curve.note }) : null], 'chart-section');
    const draw = () => {
      const width = Math.max(320, Math.min(holder.clientWidth || 640, 1100));
      holder.replaceChildren(drawChart(curve, width));
    };
    chartRedraw = draw;
    // Drawn once laid out (clientWidth is known), again when the panel is resized.
    requestAnimationFrame(draw);
    return out;
  }

  function cap(t) {
    return t ? t.charAt(0).toUpperCase() + t.slice(1) : t;
  }

  // ---------------------------------------------------------------------------------------
  // Wiring

  let pending = false;
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => {
      if (chartRedraw && !pending) {
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          if (chartRedraw) {
            chartRedraw();
          }
        });
      }
    }).observe(app);
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
