import type { ComponentChildren } from "preact";

/** A column: its header and what each row shows in it. */
export interface Column<Row> {
  readonly header: string;
  readonly cell: (row: Row) => ComponentChildren;
}

/**
 * Every table of the console: a caption (the table's accessible name), column headers, one row per
 * item keyed by `rowKey`, and `empty` in place of the rows when there are none. It scrolls sideways
 * on a narrow screen rather than the page.
 */
export function Table<Row>({ caption, columns, rows, rowKey, empty = "None." }: { caption: ComponentChildren; columns: ReadonlyArray<Column<Row>>; rows: readonly Row[]; rowKey: (row: Row) => string; empty?: string }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" key={c.header}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={columns.length} class="empty">
              {empty}
            </td>
          </tr>
        ) : (
          rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.header}>{c.cell(row)}</td>
              ))}
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

/** Columns from `[header, cell]` pairs. */
export const columns = <Row,>(...pairs: Array<[string, (row: Row) => ComponentChildren]>): Array<Column<Row>> => pairs.map(([header, cell]) => ({ header, cell }));
