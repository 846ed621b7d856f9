/**
 * The table of a check result (shapes: modules in call order; gradcheck: parameters) as rows
 * with formatted cells, tones, and where each row points in the model's source. Pure logic.
 */
import type { CheckResult, CheckTable, TableCell } from '../protocol';
import { formatNumber, tupleText } from '../webview/format';
import type { SourceTarget, SymbolRef, TableView, Tone } from './checkResultTypes';

/** A table cell as text: a shape [64, 10] as "(64, 10)", [37] as "(37,)", null as "—". */
export function formatCell(cell: TableCell | undefined): string {
  if (cell === null || cell === undefined) {
    return '—';
  }
  if (typeof cell === 'number') {
    return formatNumber(cell);
  }
  if (typeof cell === 'boolean') {
    return cell ? 'yes' : 'no';
  }
  if (Array.isArray(cell)) {
    return tupleText(cell.map((c) => formatCell(c)));
  }
  if (typeof cell === 'string') {
    return cell;
  }
  return JSON.stringify(cell);
}

const CELL_TONES: Record<string, Tone> = {
  PASS: 'pass',
  pass: 'pass',
  OK: 'pass',
  WARN: 'warn',
  warn: 'warn',
  FAIL: 'fail',
  fail: 'fail',
};

const TABLE_CAPTIONS: Record<string, string> = {
  shapes: 'Modules in call order: input and output shapes',
  gradcheck: 'Parameters: analytical vs numerical gradient',
};

function columnIndex(table: CheckTable, name: string): number {
  return table.columns.findIndex((c) => c.toLowerCase() === name);
}

function leadingIdentifier(s: string): string | null {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)/.exec(s);
  return m ? m[1] : null;
}

/** Where a table row points in the model's source (a layer's definition, a custom backward). */
export function rowTarget(result: CheckResult, row: TableCell[]): { target: SourceTarget; action: string } | null {
  const table = result.table;
  if (!table) {
    return null;
  }
  const own = (member?: string): SymbolRef => (member ? { className: result.className, member } : { className: result.className });
  const moduleCol = columnIndex(table, 'module');
  if (moduleCol >= 0 && typeof row[moduleCol] === 'string') {
    const name = row[moduleCol] as string;
    const typeCol = columnIndex(table, 'type');
    const type = typeCol >= 0 && typeof row[typeCol] === 'string' ? ` (${row[typeCol]})` : '';
    const first = name.startsWith('(') ? null : leadingIdentifier(name);
    const symbols = first ? [own(first)] : [own()];
    return {
      target: { file: result.file, line: null, symbols },
      action: first ? `Open ${name}${type} in the editor` : `Open ${result.className} in the editor`,
    };
  }
  const paramCol = columnIndex(table, 'parameter');
  if (paramCol >= 0 && typeof row[paramCol] === 'string') {
    const name = row[paramCol] as string;
    const first = leadingIdentifier(name);
    const symbols: SymbolRef[] = [];
    const fromCol = columnIndex(table, 'gradient from');
    const from = fromCol >= 0 && typeof row[fromCol] === 'string' ? (row[fromCol] as string) : 'autograd';
    const fn = from !== 'autograd' ? leadingIdentifier(from) : null;
    if (fn) {
      symbols.push({ className: fn, member: 'backward' });
    }
    symbols.push(first ? own(first) : own());
    return {
      target: { file: result.file, line: null, symbols },
      action: fn ? `Open the backward of ${fn} in the editor` : `Open ${name} in the editor`,
    };
  }
  return null;
}

export function tableView(result: CheckResult): TableView | null {
  const table = result.table;
  if (!table || !Array.isArray(table.columns)) {
    return null;
  }
  const rows = Array.isArray(table.rows) ? table.rows : [];
  const numeric = table.columns.map((_, c) => {
    const vals = rows.map((r) => r[c]).filter((v) => v !== null && v !== undefined && v !== '');
    return vals.length > 0 && vals.every((v) => typeof v === 'number');
  });
  const depthCol = columnIndex(table, 'depth');
  const errorRow = typeof table.errorRow === 'number' && table.errorRow >= 0 && table.errorRow < rows.length ? table.errorRow : null;
  return {
    caption: TABLE_CAPTIONS[result.check] ?? 'Results',
    columns: table.columns.map(String),
    numeric,
    errorRow,
    rows: rows.map((row, i) => {
      const where = rowTarget(result, row);
      const depth = depthCol >= 0 && typeof row[depthCol] === 'number' ? Math.max(0, Math.min(8, row[depthCol] as number)) : 0;
      return {
        cells: table.columns.map((_, c) => {
          const v = row[c];
          return { text: formatCell(v), tone: typeof v === 'string' ? (CELL_TONES[v] ?? null) : null };
        }),
        error: i === errorRow,
        target: where?.target ?? null,
        action: where?.action ?? null,
        depth,
      };
    }),
  };
}

