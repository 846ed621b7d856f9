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

  function seriesClass(sr, i) {
    return 'series s-' + (i % 5) + (sr.faint ? ' faint' : '') + (sr.axis === 'right' ? ' right' : '');
  }

  function fmt(n) {
    return n.toFixed(1);
  }

  function drawChart(curve, width) {
    const height = Math.round(Math.max(220, Math.min(360, width * 0.42)));
    const charW = 6.6; // ~11px UI font
    const labelWidth = (ticks) => Math.max(0, ...ticks.map((t) => t.label.length)) * charW;

    // Mark labels take rows above the plot when they would overlap.
    const log = curve.x.scale === 'log';
    const xv = (v) => (log ? Math.log10(v) : v);
    const left = Math.round(labelWidth(curve.y.ticks) + 34);
    const right = curve.y2 ? Math.round(labelWidth(curve.y2.ticks) + 34) : 24;
    const plotW = width - left - right;
    const x0 = xv(curve.x.min);
    const x1 = xv(curve.x.max);
    const px = (v) => left + ((xv(v) - x0) / (x1 - x0 || 1)) * plotW;

    const marks = curve.marks
      .map((m, i) => ({ m: m, i: i, x: px(m.x), w: m.label.length * charW + 8 }))
      .sort((a, b) => a.x - b.x);
    const rowEnds = [];
    for (const mk of marks) {
      const anchor = mk.x - left < mk.w / 2 ? 'start' : left + plotW - mk.x < mk.w / 2 ? 'end' : 'middle';
      const start = anchor === 'start' ? mk.x : anchor === 'end' ? mk.x - mk.w : mk.x - mk.w / 2;
      let row = 0;
      while (rowEnds[row] !== undefined && rowEnds[row] > start) {
        row++;
      }
      rowEnds[row] = start + mk.w;
      mk.row = row;
      mk.anchor = anchor;
    }
    const top = 12 + rowEnds.length * 14;
    const bottom = 46;
    const plotH = height - top - bottom;
    const py = (axis) => (v) => top + (1 - (v - axis.min) / (axis.max - axis.min || 1)) * plotH;
    const yl = py(curve.y);
    const yr = curve.y2 ? py(curve.y2) : null;

    const svg = s('svg', {
      class: 'chart-svg',
      width: String(width),
      height: String(height),
      viewBox: '0 0 ' + width + ' ' + height,
      role: 'img',
      'aria-label': curve.summary,
    });
    svg.appendChild(s('title', { text: curve.summary }));

    const clipId = 'plot-clip';
    svg.appendChild(
      s('defs', {}, s('clipPath', { id: clipId }, s('rect', { x: fmt(left - 4), y: fmt(top - 1), width: fmt(plotW + 8), height: fmt(plotH + 4) }))),
    );

    // Grid and left ticks
    const grid = s('g', { class: 'grid-lines' });
    const axes = s('g', { class: 'axes' });
    for (const t of curve.y.ticks) {
      const y = yl(t.value);
      grid.appendChild(s('line', { class: 'grid', x1: fmt(left), x2: fmt(left + plotW), y1: fmt(y), y2: fmt(y) }));
      axes.appendChild(s('text', { class: 'tick-label', x: fmt(left - 6), y: fmt(y), 'text-anchor': 'end', 'dominant-baseline': 'middle', text: t.label }));
    }
    if (curve.y2) {
      for (const t of curve.y2.ticks) {
        const y = yr(t.value);
        axes.appendChild(s('line', { class: 'tick', x1: fmt(left + plotW), x2: fmt(left + plotW + 4), y1: fmt(y), y2: fmt(y) }));
        axes.appendChild(
          s('text', { class: 'tick-label', x: fmt(left + plotW + 7), y: fmt(y), 'text-anchor': 'start', 'dominant-baseline': 'middle', text: t.label }),
        );
      }
    }
    // x ticks (log axes get unlabelled minor ticks at 2..9 × 10^k)
    for (const t of curve.x.ticks) {
      const x = px(t.value);
      grid.appendChild(s('line', { class: 'grid grid-x', x1: fmt(x), x2: fmt(x), y1: fmt(top), y2: fmt(top + plotH) }));
      axes.appendChild(s('line', { class: 'tick', x1: fmt(x), x2: fmt(x), y1: fmt(top + plotH), y2: fmt(top + plotH + 5) }));
      axes.appendChild(s('text', { class: 'tick-label', x: fmt(x), y: fmt(top + plotH + 17), 'text-anchor': 'middle', text: t.label }));
    }
    if (log) {
      for (let k = Math.round(x0); k < Math.round(x1); k++) {
        for (let m = 2; m <= 9; m++) {
          const x = px(m * Math.pow(10, k));
          axes.appendChild(s('line', { class: 'tick minor', x1: fmt(x), x2: fmt(x), y1: fmt(top + plotH), y2: fmt(top + plotH + 3) }));
        }
      }
    }
    // Axis lines and titles
    axes.appendChild(s('line', { class: 'axis-line', x1: fmt(left), x2: fmt(left + plotW), y1: fmt(top + plotH), y2: fmt(top + plotH) }));
    axes.appendChild(s('line', { class: 'axis-line', x1: fmt(left), x2: fmt(left), y1: fmt(top), y2: fmt(top + plotH) }));
    if (curve.y2) {
      axes.appendChild(s('line', { class: 'axis-line', x1: fmt(left + plotW), x2: fmt(left + plotW), y1: fmt(top), y2: fmt(top + plotH) }));
    }
    axes.appendChild(
      s('text', {
        class: 'axis-title',
        x: fmt(left + plotW / 2),
        y: fmt(height - 8),
        'text-anchor': 'middle',
        text: curve.x.label + (log ? ' (log scale)' : ''),
      }),
    );
    const yTitleY = top + plotH / 2;
    axes.appendChild(
      s('text', { class: 'axis-title', x: '0', y: '0', 'text-anchor': 'middle', transform: 'translate(13 ' + fmt(yTitleY) + ') rotate(-90)', text: curve.y.label }),
    );
    if (curve.y2) {
      axes.appendChild(
        s('text', {
          class: 'axis-title',
          x: '0',
          y: '0',
          'text-anchor': 'middle',
          transform: 'translate(' + fmt(width - 10) + ' ' + fmt(yTitleY) + ') rotate(90)',
          text: curve.y2.label,
        }),
      );
    }
    svg.appendChild(grid);
    svg.appendChild(axes);

    // Series: a path per run of finite points; a lone point is a dot.
    const lines = s('g', { class: 'lines', 'clip-path': 'url(#' + clipId + ')' });
    curve.series.forEach((sr, i) => {
      const y = sr.axis === 'right' && yr ? yr : yl;
      const segs = [];
      let cur = [];
      for (const p of sr.points) {
        if (p[1] === null) {
          if (cur.length) {
            segs.push(cur);
          }
          cur = [];
        } else {
          cur.push([px(p[0]), y(p[1])]);
        }
      }
      if (cur.length) {
        segs.push(cur);
      }
      const cls = seriesClass(sr, i);
      const g = s('g', { class: 'series-group', 'data-series': sr.name });
      for (const seg of segs) {
        if (seg.length === 1) {
          g.appendChild(s('circle', { class: 'dot s-' + (i % 5), cx: fmt(seg[0][0]), cy: fmt(seg[0][1]), r: '2.5' }));
        } else {
          g.appendChild(s('path', { class: cls, d: 'M' + seg.map((q) => fmt(q[0]) + ' ' + fmt(q[1])).join('L') }));
        }
      }
      lines.appendChild(g);
    });
    svg.appendChild(lines);

    // Marks: dashed verticals with their labels above the plot.
    const markLayer = s('g', { class: 'marks' });
    for (const mk of marks) {
      const cls = 'mark m-' + (mk.i % 3);
      markLayer.appendChild(s('line', { class: cls, x1: fmt(mk.x), x2: fmt(mk.x), y1: fmt(top), y2: fmt(top + plotH) }, s('title', { text: mk.m.label })));
      const ty = top - 6 - mk.row * 14;
      markLayer.appendChild(s('text', { class: 'mark-label', x: fmt(mk.x), y: fmt(ty), 'text-anchor': mk.anchor, text: mk.m.label }));
    }
    svg.appendChild(markLayer);
    return svg;
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
