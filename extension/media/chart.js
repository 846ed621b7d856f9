// @ts-check
// Torch Doctor: the check-result chart as SVG (loss per step, the LR finder's sweep). Draws a
// CurveView (extension/src/checks/curveView.ts: axes, ticks, series, marks, already computed)
// at a given width: grid and ticks, axis titles, one path per run of finite points, dashed
// marks with their labels in rows above the plot. Loaded after media/dom.js, before
// checkResult.js, which reads window.TorchDoctorChart.
(function () {
  'use strict';

  const { s } = window.TorchDoctorDom;
  const CHAR_W = 6.6; // ~11px UI font

  /** @param {number} n */
  function fmt(n) {
    return n.toFixed(1);
  }

  /**
   * The line class of series `i`.
   * @param {{ faint?: boolean, axis?: string }} sr
   * @param {number} i
   */
  function seriesClass(sr, i) {
    return 'series s-' + (i % 5) + (sr.faint ? ' faint' : '') + (sr.axis === 'right' ? ' right' : '');
  }

  /** @param {{ label: string }[]} ticks */
  function labelWidth(ticks) {
    return Math.max(0, ...ticks.map((t) => t.label.length)) * CHAR_W;
  }

  /** Mark labels take rows above the plot when they would overlap: each mark's row and anchor. */
  function placeMarks(curve, px, left, plotW) {
    const marks = curve.marks
      .map((m, i) => ({ m: m, i: i, x: px(m.x), w: m.label.length * CHAR_W + 8, row: 0, anchor: 'middle' }))
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
    return { marks: marks, rows: rowEnds.length };
  }

  /** Where everything goes: margins, the plot box, value → pixel functions, the placed marks. */
  function layout(curve, width) {
    const height = Math.round(Math.max(220, Math.min(360, width * 0.42)));
    const log = curve.x.scale === 'log';
    const xv = (v) => (log ? Math.log10(v) : v);
    const left = Math.round(labelWidth(curve.y.ticks) + 34);
    const right = curve.y2 ? Math.round(labelWidth(curve.y2.ticks) + 34) : 24;
    const plotW = width - left - right;
    const x0 = xv(curve.x.min);
    const x1 = xv(curve.x.max);
    const px = (v) => left + ((xv(v) - x0) / (x1 - x0 || 1)) * plotW;
    const placed = placeMarks(curve, px, left, plotW);
    const top = 12 + placed.rows * 14;
    const plotH = height - top - 46;
    const py = (axis) => (v) => top + (1 - (v - axis.min) / (axis.max - axis.min || 1)) * plotH;
    return {
      width, height, log, left, plotW, x0, x1, px, top, plotH,
      marks: placed.marks,
      yl: py(curve.y),
      yr: curve.y2 ? py(curve.y2) : null,
    };
  }

  /** Grid lines and y ticks (left, and right for a second axis). */
  function yTicks(curve, g, grid, axes) {
    for (const t of curve.y.ticks) {
      const y = g.yl(t.value);
      grid.appendChild(s('line', { class: 'grid', x1: fmt(g.left), x2: fmt(g.left + g.plotW), y1: fmt(y), y2: fmt(y) }));
      axes.appendChild(s('text', { class: 'tick-label', x: fmt(g.left - 6), y: fmt(y), 'text-anchor': 'end', 'dominant-baseline': 'middle', text: t.label }));
    }
    if (curve.y2) {
      const right = g.left + g.plotW;
      for (const t of curve.y2.ticks) {
        const y = g.yr(t.value);
        axes.appendChild(s('line', { class: 'tick', x1: fmt(right), x2: fmt(right + 4), y1: fmt(y), y2: fmt(y) }));
        axes.appendChild(
          s('text', { class: 'tick-label', x: fmt(right + 7), y: fmt(y), 'text-anchor': 'start', 'dominant-baseline': 'middle', text: t.label }),
        );
      }
    }
  }

  /** x ticks; log axes get unlabelled minor ticks at 2..9 × 10^k. */
  function xTicks(curve, g, grid, axes) {
    const base = g.top + g.plotH;
    for (const t of curve.x.ticks) {
      const x = g.px(t.value);
      grid.appendChild(s('line', { class: 'grid grid-x', x1: fmt(x), x2: fmt(x), y1: fmt(g.top), y2: fmt(base) }));
      axes.appendChild(s('line', { class: 'tick', x1: fmt(x), x2: fmt(x), y1: fmt(base), y2: fmt(base + 5) }));
      axes.appendChild(s('text', { class: 'tick-label', x: fmt(x), y: fmt(base + 17), 'text-anchor': 'middle', text: t.label }));
    }
    if (g.log) {
      for (let k = Math.round(g.x0); k < Math.round(g.x1); k++) {
        for (let m = 2; m <= 9; m++) {
          const x = g.px(m * Math.pow(10, k));
          axes.appendChild(s('line', { class: 'tick minor', x1: fmt(x), x2: fmt(x), y1: fmt(base), y2: fmt(base + 3) }));
        }
      }
    }
  }

  /** The axis lines and their titles. */
  function axisLines(curve, g, axes) {
    const base = g.top + g.plotH;
    const right = g.left + g.plotW;
    axes.appendChild(s('line', { class: 'axis-line', x1: fmt(g.left), x2: fmt(right), y1: fmt(base), y2: fmt(base) }));
    axes.appendChild(s('line', { class: 'axis-line', x1: fmt(g.left), x2: fmt(g.left), y1: fmt(g.top), y2: fmt(base) }));
    if (curve.y2) {
      axes.appendChild(s('line', { class: 'axis-line', x1: fmt(right), x2: fmt(right), y1: fmt(g.top), y2: fmt(base) }));
    }
    axes.appendChild(
      s('text', {
        class: 'axis-title',
        x: fmt(g.left + g.plotW / 2),
        y: fmt(g.height - 8),
        'text-anchor': 'middle',
        text: curve.x.label + (g.log ? ' (log scale)' : ''),
      }),
    );
    const yTitleY = g.top + g.plotH / 2;
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
          transform: 'translate(' + fmt(g.width - 10) + ' ' + fmt(yTitleY) + ') rotate(90)',
          text: curve.y2.label,
        }),
      );
    }
  }

  /** Series: a path per run of finite points; a lone point is a dot. */
  function seriesLines(curve, g, clipId) {
    const lines = s('g', { class: 'lines', 'clip-path': 'url(#' + clipId + ')' });
    curve.series.forEach((sr, i) => {
      const y = sr.axis === 'right' && g.yr ? g.yr : g.yl;
      const segs = [];
      let cur = [];
      for (const p of sr.points) {
        if (p[1] === null) {
          if (cur.length) {
            segs.push(cur);
          }
          cur = [];
        } else {
          cur.push([g.px(p[0]), y(p[1])]);
        }
      }
      if (cur.length) {
        segs.push(cur);
      }
      const cls = seriesClass(sr, i);
      const group = s('g', { class: 'series-group', 'data-series': sr.name });
      for (const seg of segs) {
        if (seg.length === 1) {
          group.appendChild(s('circle', { class: 'dot s-' + (i % 5), cx: fmt(seg[0][0]), cy: fmt(seg[0][1]), r: '2.5' }));
        } else {
          group.appendChild(s('path', { class: cls, d: 'M' + seg.map((q) => fmt(q[0]) + ' ' + fmt(q[1])).join('L') }));
        }
      }
      lines.appendChild(group);
    });
    return lines;
  }

  /** Marks: dashed verticals with their labels above the plot. */
  function markLines(g) {
    const layer = s('g', { class: 'marks' });
    for (const mk of g.marks) {
      const cls = 'mark m-' + (mk.i % 3);
      layer.appendChild(s('line', { class: cls, x1: fmt(mk.x), x2: fmt(mk.x), y1: fmt(g.top), y2: fmt(g.top + g.plotH) }, s('title', { text: mk.m.label })));
      const ty = g.top - 6 - mk.row * 14;
      layer.appendChild(s('text', { class: 'mark-label', x: fmt(mk.x), y: fmt(ty), 'text-anchor': mk.anchor, text: mk.m.label }));
    }
    return layer;
  }

  /**
   * The chart of a CurveView, `width` pixels wide.
   * @returns {SVGElement}
   */
  function drawChart(curve, width) {
    const g = layout(curve, width);
    const svg = s('svg', {
      class: 'chart-svg',
      width: String(width),
      height: String(g.height),
      viewBox: '0 0 ' + width + ' ' + g.height,
      role: 'img',
      'aria-label': curve.summary,
    });
    svg.appendChild(s('title', { text: curve.summary }));
    const clipId = 'plot-clip';
    svg.appendChild(
      s('defs', {}, s('clipPath', { id: clipId }, s('rect', { x: fmt(g.left - 4), y: fmt(g.top - 1), width: fmt(g.plotW + 8), height: fmt(g.plotH + 4) }))),
    );
    const grid = s('g', { class: 'grid-lines' });
    const axes = s('g', { class: 'axes' });
    yTicks(curve, g, grid, axes);
    xTicks(curve, g, grid, axes);
    axisLines(curve, g, axes);
    svg.appendChild(grid);
    svg.appendChild(axes);
    svg.appendChild(seriesLines(curve, g, clipId));
    svg.appendChild(markLines(g));
    return svg;
  }

  window.TorchDoctorChart = { drawChart, seriesClass };
})();
