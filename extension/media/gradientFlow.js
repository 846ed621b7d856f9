// @ts-check
// Torch Doctor: the gradient-flow page. Draws a GradientFlowPage (extension/src/views/gradientFlowPage.ts):
// a summary, the model-level verdicts, then one row per parameter in model order with mean |g|
// and max |g| as bars on a shared log axis; flagged rows carry their verdicts under them.
(function () {
  'use strict';

  const P = window.TorchDoctorPage;
  const h = P.h;
  let relabel = null;

  const BAR_TEXT = {
    zero: 'all zero',
    none: 'no gradient',
    nan: 'NaN',
    inf: 'Inf',
  };

  /** Chips over the verdicts (the backend's list of findings), by severity, as the backend counted them. */
  function countChips(c) {
    const chips = [];
    const add = (n, tone, icon, one, many) => {
      if (n) {
        chips.push(
          h('span', { class: 'chip tone-' + tone }, [
            h('span', { 'aria-hidden': 'true', text: icon + ' ' }),
            n + ' ' + (n === 1 ? one : many),
          ]),
        );
      }
    };
    add(c.error, 'error', '✖', 'error', 'errors');
    add(c.warning, 'warning', '⚠', 'warning', 'warnings');
    add(c.info, 'info', 'ℹ', 'note', 'notes');
    return chips.length ? h('span', { class: 'chips' }, chips) : null;
  }

  function verdictList(view) {
    if (!view.verdicts.length) {
      return null;
    }
    return h(
      'section',
      { class: 'verdicts', id: 'verdicts', 'aria-label': 'Verdicts about the whole model' },
      view.verdicts.map((v) =>
        P.flagLine(
          v,
          v.target
            ? P.linkButton('Go to ' + (v.module || P.baseName(v.target.file)), () => P.openTarget(v.target), {
                class: 'link goto',
                title: v.target.file + ':' + v.target.line,
              })
            : null,
        ),
      ),
    );
  }

  function legend(view) {
    return h('div', { class: 'legend', id: 'legend', 'aria-hidden': 'true' }, [
      h('span', { class: 'legend-item' }, [h('span', { class: 'swatch swatch-mean' }), 'mean |g|']),
      h('span', { class: 'legend-item' }, [h('span', { class: 'swatch swatch-max' }), 'max |g|']),
      view.thresholds.map((t) =>
        h('span', { class: 'legend-item' }, [h('span', { class: 'swatch swatch-threshold swatch-' + t.kind }), t.label]),
      ),
      h('span', { class: 'legend-item muted', text: 'log scale' }),
    ]);
  }

  function axisHeader(axis) {
    const holder = h('div', { class: 'axis', id: 'axis' });
    for (const t of axis.ticks) {
      const tick = h('span', { class: 'tick', 'data-exp': String(t.exp), text: t.label });
      tick.style.left = t.fraction * 100 + '%';
      holder.appendChild(tick);
    }
    return holder;
  }

  /** Label every k-th decade so labels never collide (k from the axis' pixel width). */
  function labelTicks(holder, axis) {
    const width = holder.clientWidth;
    const decades = axis.hi - axis.lo;
    if (!width || !decades) {
      return;
    }
    const widest = Math.max.apply(null, axis.ticks.map((t) => t.label.length)) * 7 + 8;
    const perDecade = width / decades;
    const steps = [1, 2, 3, 4, 5, 6, 10, 15, 20];
    const k = steps.find((step) => perDecade * step >= widest) || 30;
    holder.querySelectorAll('.tick').forEach((el) => {
      const exp = Number(el.dataset.exp);
      const show = ((exp % k) + k) % k === 0;
      el.classList.toggle('unlabelled', !show);
      const f = (exp - axis.lo) / decades;
      el.classList.toggle('edge-start', f < 0.02);
      el.classList.toggle('edge-end', f > 0.98);
    });
  }

  function thresholdLines(view) {
    return view.thresholds.map((t) => {
      const line = h('span', { class: 'threshold threshold-' + t.kind, 'aria-hidden': 'true' });
      line.style.left = t.fraction * 100 + '%';
      return line;
    });
  }

  function bar(which, b, note) {
    const track = [];
    if (b.kind === 'value' || b.kind === 'below' || b.kind === 'above' || b.kind === 'inf') {
      const el = h('span', { class: 'bar bar-' + which + ' kind-' + b.kind });
      el.style.width = b.fraction * 100 + '%';
      track.push(el);
      if (b.kind === 'above' || b.kind === 'inf') {
        track.push(h('span', { class: 'bar-mark bar-mark-' + which + ' mark-end', 'aria-hidden': 'true', text: '›' }));
      } else if (b.kind === 'below') {
        track.push(h('span', { class: 'bar-mark bar-mark-' + which + ' mark-start', 'aria-hidden': 'true', text: '‹' }));
      }
    } else {
      track.push(
        h('span', { class: 'bar-note bar-note-' + which + ' kind-' + b.kind }, [
          b.kind === 'nan' ? h('span', { 'aria-hidden': 'true', text: '✖ ' }) : null,
          note || BAR_TEXT[b.kind] || b.text,
        ]),
      );
    }
    return track;
  }

  /** Two lanes (mean over max); one note across both when neither has a bar for the same reason. */
  function track(r, view) {
    const noBar = (k) => k === 'zero' || k === 'none' || k === 'nan';
    if (r.mean.kind === r.max.kind && noBar(r.mean.kind)) {
      return h('div', { class: 'track track-note' }, [bar('both', r.mean, r.note), thresholdLines(view)]);
    }
    return h('div', { class: 'track' }, [
      h('div', { class: 'lane lane-mean' }, bar('mean', r.mean)),
      h('div', { class: 'lane lane-max' }, bar('max', r.max)),
      thresholdLines(view),
    ]);
  }

  function tableHead(axisCell) {
    return h('thead', {}, [
      h('tr', {}, [
        h('th', { scope: 'col', class: 'col-flag' }, P.srOnly('Flag')),
        h('th', { scope: 'col', class: 'col-name', text: 'Parameter' }),
        axisCell,
        h('th', { scope: 'col', class: 'num', text: 'mean |g|' }),
        h('th', { scope: 'col', class: 'num col-max', text: 'max |g|' }),
        h('th', { scope: 'col', class: 'num col-norm', text: 'norm' }),
      ]),
    ]);
  }

  /** One parameter's row: flag glyph, name with badges, the bars, the numbers. */
  function gradientRow(r, view) {
    const cls = ['row', r.tone ? 'flagged tone-' + r.tone : '', r.target ? 'has-target' : '', r.nonFinite ? 'nonfinite' : ''];
    return h(
      'tr',
      {
        class: cls.join(' ').trim(),
        'data-key': 'g:' + r.name,
        'data-index': String(r.index),
        'aria-label': r.label,
        title: r.target ? r.target.file + ':' + r.target.line + ' (Enter)' : null,
      },
      [
        h('td', { class: 'col-flag' }, r.tone ? P.toneIcon(r.tone, r.flags[0].icon, r.flags[0].label) : null),
        h(
          'td',
          { class: 'col-name' },
          h('div', { class: 'name-wrap', title: r.name + (r.type ? ' (' + r.type + ')' : '') }, [
            r.nonFinite
              ? h('span', { class: 'badge-nonfinite' }, [h('span', { 'aria-hidden': 'true', text: '✖ ' }), r.nonFinite])
              : null,
            h('span', { class: 'param-name' }, dotted(shortName(r, view))),
            r.type ? h('span', { class: 'param-type', text: r.type }) : null,
            r.changed && !view.allChanged ? h('span', { class: 'badge-changed', text: 'changed in place', title: 'Modified in place since the backward (clipping, zero_grad): the numbers are of its current values' }) : null,
          ]),
        ),
        h('td', { class: 'col-bars' }, track(r, view)),
        h('td', { class: 'num val kind-' + r.mean.kind, text: r.mean.text }),
        h('td', { class: 'num val col-max kind-' + r.max.kind, text: r.max.text }),
        h('td', { class: 'num val col-norm', text: r.norm }),
      ],
    );
  }

  /** A dotted name with a break opportunity after each dot (a long name wraps, never cut). */
  function dotted(name) {
    const out = [];
    name.split('.').forEach((part, i, all) => {
      out.push(i < all.length - 1 ? part + '.' : part);
      if (i < all.length - 1) {
        out.push(h('wbr'));
      }
    });
    return out;
  }

  /** Inside a block, the name after the block's path (the header says the path). */
  function shortName(r, view) {
    const g = r.group !== null && r.group !== undefined && view.groups ? view.groups[r.group] : null;
    return g && r.name.startsWith(g.path + '.') ? r.name.slice(g.path.length + 1) : r.name;
  }

  /** A block's header row: a toggle, its name and size, its own bars (mean over the block). */
  function groupRow(g, view, folded, toggle) {
    const tr = h(
      'tr',
      {
        class: 'row group-row' + (g.tone ? ' flagged tone-' + g.tone : ''),
        'data-key': 'b:' + g.path,
        'data-group': String(g.index),
        'aria-expanded': folded ? 'false' : 'true',
        'aria-label': g.label + (folded ? ' Folded: Enter shows its rows.' : ' Enter folds its rows.'),
        title: g.path + ' — ' + (folded ? 'click to show its ' + g.count + ' rows' : 'click to fold its rows'),
      },
      [
        h('td', { class: 'col-flag' }, g.tone ? P.toneIcon(g.tone, g.tone === 'error' ? '✖' : g.tone === 'warning' ? '⚠' : 'ℹ', g.flagged + ' flagged') : null),
        h(
          'td',
          { class: 'col-name' },
          h('div', { class: 'name-wrap', title: g.path + (g.type ? ' (' + g.type + ')' : '') }, [
            h('span', { class: 'fold-glyph', 'aria-hidden': 'true', text: folded ? '▸ ' : '▾ ' }),
            h('span', { class: 'param-name group-name' }, dotted(g.path)),
            h('span', { class: 'param-type', text: (g.type ? g.type + ' · ' : '') + g.count + ' params' }),
          ]),
        ),
        h('td', { class: 'col-bars' }, track({ mean: g.mean, max: g.max, note: '' }, view)),
        h('td', { class: 'num val kind-' + g.mean.kind, text: g.mean.text }),
        h('td', { class: 'num val col-max kind-' + g.max.kind, text: g.max.text }),
        h('td', { class: 'num val col-norm', text: g.norm }),
      ],
    );
    tr._toggle = toggle;
    return tr;
  }

  /** The flags written under a row (folded by the backend: a run says its sentence once). */
  function flagRow(r) {
    const lines = r.details.map((d) =>
      P.flagLine(
        d.flag,
        d.repeats
          ? h('span', { class: 'repeats', text: 'The same for the next ' + (d.repeats === 1 ? 'row' : d.repeats + ' rows') + ' (' + d.flag.icon + ').' })
          : null,
      ),
    );
    return h('tr', { class: 'flag-row tone-' + r.tone, 'data-for': String(r.index) }, [h('td', { class: 'col-flag' }), h('td', { colspan: '5' }, lines)]);
  }

  function renderTable(view, container) {
    const axis = view.axis;
    const decades = axis.hi - axis.lo;
    const table = h('table', { class: decades > 20 ? 'grid dense' : 'grid', id: 'gradient-table' });
    table.style.setProperty('--decades', String(decades));
    const axisCell = h('th', { scope: 'col', class: 'col-bars' }, [h('span', { class: 'sr-only', text: 'Gradient magnitude, log scale' }), axisHeader(axis)]);
    table.appendChild(tableHead(axisCell));
    const tbody = h('tbody');
    const rows = [];
    const flaggedOnly = !!P.ui().flaggedOnly && view.counts.flagged > 0;
    const groups = view.groups || [];
    const members = groups.map(() => []);
    const isFolded = (g) => {
      const chosen = (P.ui().folds || {})[g.path];
      return typeof chosen === 'boolean' ? chosen : g.folded;
    };
    const toggle = (g, header) => {
      const folded = !isFolded(g);
      P.setUi({ folds: Object.assign({}, P.ui().folds || {}, { [g.path]: folded }) });
      header.setAttribute('aria-expanded', folded ? 'false' : 'true');
      header.querySelector('.fold-glyph').textContent = folded ? '▸ ' : '▾ ';
      for (const el of members[g.index]) {
        el.hidden = folded || (flaggedOnly && el._plain);
      }
    };
    for (const r of view.rows) {
      const g = r.group !== null && r.group !== undefined ? groups[r.group] : null;
      if (g && g.first === r.index) {
        const header = groupRow(g, view, isFolded(g), () => toggle(g, header));
        header.hidden = flaggedOnly && !g.tone;
        rows.push(header);
        tbody.appendChild(header);
      }
      const inFold = !!g && isFolded(g);
      const tr = gradientRow(r, view);
      if (r.target) {
        tr._target = r.target;
      }
      tr._plain = !r.tone;
      tr.hidden = (flaggedOnly && !r.tone) || inFold;
      if (g) {
        tr.classList.add('in-group');
        members[g.index].push(tr);
      }
      rows.push(tr);
      tbody.appendChild(tr);
      if (r.details.length) {
        const under = flagRow(r);
        under.hidden = inFold;
        if (g) {
          members[g.index].push(under);
        }
        tbody.appendChild(under);
      } else if (r.tone) {
        tr.classList.add('folded');
      }
    }
    table.appendChild(tbody);
    P.rovingRows(tbody, rows, (row) => {
      if (row._toggle) {
        row._toggle();
      } else if (row._target) {
        P.openTarget(row._target);
      }
    });
    container.appendChild(h('div', { class: 'table-wrap' }, table));
    const holder = axisCell.querySelector('.axis');
    relabel = () => labelTicks(holder, axis);
    requestAnimationFrame(relabel);
  }

  function renderData(view, app) {
    app.appendChild(
      h('section', { class: 'summary', id: 'summary' }, [
        h('p', { class: 'summary-line' }, P.textParts(view.summary)),
        view.moment && view.moment.length ? h('p', { class: 'moment muted', id: 'moment' }, P.textParts(view.moment)) : null,
        countChips(view.verdictCounts),
      ]),
    );
    const verdicts = verdictList(view);
    if (verdicts) {
      app.appendChild(verdicts);
    }
    if (!view.rows.length) {
      app.appendChild(h('p', { class: 'empty-gradients', id: 'empty-gradients', text: view.emptyText }));
      return;
    }
    const controls = h('div', { class: 'controls' }, [legend(view)]);
    if (view.counts.flagged > 0 && view.counts.flagged < view.counts.rows) {
      const id = 'flagged-only';
      const box = h('input', {
        type: 'checkbox',
        id: id,
        checked: !!P.ui().flaggedOnly,
        onchange: (e) => {
          P.setUi({ flaggedOnly: e.target.checked });
          P.rerender();
        },
      });
      controls.appendChild(
        h('label', { class: 'toggle', for: id }, [box, ' Only flagged rows (' + view.counts.flagged + ' of ' + view.counts.rows + ')']),
      );
    }
    app.appendChild(controls);
    renderTable(view, app);
  }

  if (typeof ResizeObserver === 'function') {
    let pending = false;
    new ResizeObserver(() => {
      if (relabel && !pending) {
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          if (relabel) {
            relabel();
          }
        });
      }
    }).observe(document.body);
  }

  P.start((view, app) => {
    relabel = null;
    // Every row changed since the backward (clipping): the moment line says it once, not per row.
    view.allChanged = view.rows.length > 0 && view.rows.every((r) => r.changed);
    renderData(view, app);
  });
})();
