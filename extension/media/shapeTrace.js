// @ts-check
// Torch Doctor: the shape-trace page. Draws a ShapeTracePage (extension/src/views/shapeTracePage.ts):
// the module tree of the last forward (indented by depth) with input → output shapes, parameter
// counts, dtype/device changes, and the module where a shape error was raised.
(function () {
  'use strict';

  const P = window.TorchDoctorPage;
  const h = P.h;

  function failureBlock(f) {
    return h('section', { class: 'failure', id: 'failure', role: 'group', 'aria-label': 'Shape error in ' + f.where }, [
      h('p', { class: 'failure-title' }, [
        h('span', { class: 'failure-icon', 'aria-hidden': 'true', text: '✖ ' }),
        'Shape error in ',
        h('code', { text: f.where }),
      ]),
      h('pre', { class: 'failure-error' }, h('code', { text: f.error })),
      f.explanation.length ? h('p', { class: 'failure-explanation' }, P.textParts(f.explanation)) : null,
      h('p', { class: 'failure-actions' }, [
        f.target
          ? P.linkButton('Go to ' + P.baseName(f.target.file) + ':' + f.target.line, () => P.openTarget(f.target), {
              class: 'link goto',
              id: 'failure-goto',
              title: f.target.file + ':' + f.target.line,
            })
          : null,
        f.row !== null
          ? P.linkButton('Show in the trace', () => {
              const row = /** @type {HTMLElement | null} */ (document.querySelector('tr[data-index="' + f.row + '"]'));
              if (row) {
                row.scrollIntoView({ block: 'center' });
                row.focus();
              }
            }, { class: 'link', id: 'failure-show' })
          : null,
      ]),
    ]);
  }

  function changeBadges(r) {
    const out = [];
    if (r.dtypeNote) {
      out.push(h('span', { class: 'change' }, [h('span', { 'aria-hidden': 'true', text: '◆ ' }), h('span', { class: 'change-what', text: 'dtype ' }), r.dtypeNote]));
    }
    if (r.deviceNote) {
      out.push(h('span', { class: 'change' }, [h('span', { 'aria-hidden': 'true', text: '◆ ' }), h('span', { class: 'change-what', text: 'device ' }), r.deviceNote]));
    }
    return out;
  }

  function statusIcon(r) {
    if (r.failed) {
      return P.toneIcon('error', '✖', 'Failed here');
    }
    if (r.flags.length) {
      return P.toneIcon(r.flags[0].tone, r.flags[0].icon, r.flags[0].label);
    }
    if (r.paused) {
      return P.toneIcon('info', '▶', 'Paused inside');
    }
    if (r.dtypeNote || r.deviceNote) {
      return P.toneIcon('warning', '◆', 'Changes dtype or device');
    }
    return null;
  }

  function tableHead(hasActivation) {
    return h('thead', {}, [
      h('tr', {}, [
        h('th', { scope: 'col', class: 'col-flag' }, P.srOnly('Status')),
        h('th', { scope: 'col', class: 'col-module', text: 'Module' }),
        h('th', { scope: 'col', class: 'col-shape', text: 'Input' }),
        h('th', { scope: 'col', class: 'col-arrow', 'aria-hidden': 'true' }),
        h('th', { scope: 'col', class: 'col-shape', text: 'Output' }),
        h('th', { scope: 'col', class: 'num', text: 'Params' }),
        hasActivation ? h('th', { scope: 'col', class: 'col-act', text: 'Output values' }) : null,
      ]),
    ]);
  }

  /** One module call: status glyph, name indented by depth, input → output, params, values. */
  function moduleRow(r, hasActivation) {
    const changed = !!(r.dtypeNote || r.deviceNote);
    const cls = [
      'row',
      r.failed ? 'failed' : '',
      changed ? 'changed' : '',
      r.paused ? 'paused' : '',
      r.tone && !r.failed ? 'flagged tone-' + r.tone : '',
      r.target ? 'has-target' : '',
      'depth-' + Math.min(r.depth, 9),
    ];
    const nameCell = h('td', { class: 'col-module' }, [
      r.fold
        ? h('button', {
            type: 'button',
            class: 'fold-toggle',
            'aria-label': 'Fold or show the ' + r.fold.rows + ' calls inside ' + r.path,
            title: r.fold.rows + ' calls inside',
            text: '▾',
            onclick: (e) => {
              const tr = e.target.closest('tr');
              if (tr && tr._toggle) {
                tr._toggle();
              }
            },
          })
        : null,
      h('span', { class: 'mod-name', text: r.name }),
      r.type ? h('span', { class: 'mod-type', text: r.type }) : null,
    ]);
    nameCell.style.setProperty('--depth', String(r.depth));
    return h(
      'tr',
      {
        class: cls.join(' ').trim(),
        'data-key': 's:' + r.path + ':' + r.index,
        'data-index': String(r.index),
        'data-path': r.path,
        'aria-label': r.label,
        title: (r.path || '(model)') + (r.target ? ' — ' + r.target.file + ':' + r.target.line + ' (Enter)' : ''),
      },
      [
        h('td', { class: 'col-flag' }, statusIcon(r)),
        nameCell,
        h('td', { class: 'col-shape shape', text: r.input }),
        h('td', { class: 'col-arrow', 'aria-hidden': 'true', text: '→' }),
        h('td', { class: 'col-shape col-output' + (r.failed ? ' raised' : '') + (r.unfinished ? ' unfinished' : '') }, [
          h('span', { class: 'shape', text: r.failed ? '✖ raised' : r.output }),
          changeBadges(r),
        ]),
        h('td', { class: 'num', text: r.params }),
        hasActivation ? h('td', { class: 'col-act', text: r.activation }) : null,
      ],
    );
  }

  /** Under a row: its activation findings, and the error where the forward raised. */
  function rowsUnder(r, view, cols) {
    const out = [];
    if (r.flags.length) {
      const lines = h('td', { colspan: String(cols - 1), class: 'flag-cell' }, r.flags.map((f) => P.flagLine(f)));
      lines.style.setProperty('--depth', String(r.depth));
      out.push(h('tr', { class: 'flag-row tone-' + r.tone }, [h('td', { class: 'col-flag' }), lines]));
    }
    if (r.failed && view.failure) {
      const msg = h('td', { colspan: String(cols - 1), class: 'failed-text' }, [
        h('span', { class: 'failed-label', text: 'Raised: ' }),
        h('code', { text: view.failure.error.split('\n')[0] }),
      ]);
      msg.style.setProperty('--depth', String(r.depth));
      out.push(h('tr', { class: 'failed-row' }, [h('td', { class: 'col-flag' }), msg]));
    }
    return out;
  }

  function setFolded(tr, folded) {
    tr.setAttribute('aria-expanded', folded ? 'false' : 'true');
    const button = tr.querySelector('.fold-toggle');
    if (button) {
      button.textContent = folded ? '▸' : '▾';
      button.setAttribute('aria-expanded', folded ? 'false' : 'true');
    }
  }

  function renderTable(view, app) {
    const hasActivation = view.rows.some((r) => r.activation);
    const table = h('table', { class: 'grid tree', id: 'shape-table' });
    table.appendChild(tableHead(hasActivation));
    const tbody = h('tbody');
    const rows = [];
    const cols = hasActivation ? 7 : 6;
    const isFolded = (r) => {
      const chosen = (P.ui().folds || {})[r.path];
      return typeof chosen === 'boolean' ? chosen : r.fold.folded;
    };
    // A block's row folds the rows of its submodules' calls after it (the backend counted them).
    let block = null;
    let left = 0;
    for (const r of view.rows) {
      const tr = moduleRow(r, hasActivation);
      if (r.target) {
        tr._target = r.target;
      }
      const extras = rowsUnder(r, view, cols);
      if (left > 0 && block) {
        left -= 1;
        block.members.push(tr, ...extras);
        tr.hidden = block.folded;
        extras.forEach((el) => (el.hidden = block.folded));
      }
      if (r.fold) {
        const state = { folded: isFolded(r), members: [], row: tr, path: r.path };
        tr.classList.add('block-row');
        setFolded(tr, state.folded);
        tr._toggle = () => {
          state.folded = !state.folded;
          P.setUi({ folds: Object.assign({}, P.ui().folds || {}, { [state.path]: state.folded }) });
          setFolded(tr, state.folded);
          state.members.forEach((el) => (el.hidden = state.folded));
        };
        block = state;
        left = r.fold.rows;
      }
      rows.push(tr);
      tbody.appendChild(tr);
      for (const extra of extras) {
        tbody.appendChild(extra);
      }
    }
    table.appendChild(tbody);
    P.rovingRows(tbody, rows, (row) => {
      if (row._target) {
        P.openTarget(row._target);
      }
    });
    app.appendChild(h('div', { class: 'table-wrap' }, table));
  }

  P.start((view, app) => {
    if (view.failure) {
      app.appendChild(failureBlock(view.failure));
    }
    app.appendChild(
      h('section', { class: 'summary', id: 'summary' }, [
        // With a shape error the block above says it all; the summary would repeat it.
        view.failure ? null : h('p', { class: 'summary-line' }, P.textParts(view.summary)),
        view.uniform ? h('p', { class: 'muted', text: view.uniform }) : null,
        view.counts.changes
          ? h('p', { class: 'muted' }, [
              h('span', { 'aria-hidden': 'true', text: '◆ ' }),
              view.counts.changes + (view.counts.changes === 1 ? ' module changes' : ' modules change') + ' the dtype or device.',
            ])
          : null,
      ]),
    );
    renderTable(view, app);
  });
})();
