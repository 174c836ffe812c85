import { describe, expect, it } from 'vitest';
import { viewColumnOrigins } from './view-columns.ts';

// Shortened node trees in PostgreSQL's pg_node_tree text format (what pg_rewrite.ev_action::text looks like).
const entry = (resno: number, tbl: number, col: number, extra = '') =>
  `{TARGETENTRY :expr {VAR :varno 1 :varattno ${col} :location 7} :resno ${resno} :resname c\\ ${resno} :ressortgroupref 0 :resorigtbl ${tbl} :resorigcol ${col} :resjunk false${extra}}`;

describe('viewColumnOrigins', () => {
  it('reads resno / resorigtbl / resorigcol of the top-level target list', () => {
    const tree = `({QUERY :commandType 1 :rtable ({RANGETBLENTRY :eref {ALIAS :aliasname a :colnames ("id" "we\\ ird\\)")} :relid 16384}) :targetList (${entry(1, 16384, 2)} ${entry(2, 16384, 1)}) :sortClause <>})`;
    expect(viewColumnOrigins(tree)).toEqual([
      { position: 1, relation: '16384', column: 2 },
      { position: 2, relation: '16384', column: 1 },
    ]);
  });

  it('skips expressions (no origin), junk entries and target lists of subqueries', () => {
    const expr = `{TARGETENTRY :expr {CONST :consttype 23 :constvalue 4 [ 1 0 0 0 0 0 0 0 ]} :resno 2 :resname k :resorigtbl 0 :resorigcol 0 :resjunk false}`;
    const junk = `{TARGETENTRY :expr {VAR :varno 1} :resno 3 :resname x :resorigtbl 16384 :resorigcol 3 :resjunk true}`;
    const sub = `{RANGETBLENTRY :subquery {QUERY :targetList (${entry(1, 99999, 1)})}}`;
    const tree = `({QUERY :rtable (${sub}) :targetList (${entry(1, 16384, 1)} ${expr} ${junk})})`;
    expect(viewColumnOrigins(tree)).toEqual([{ position: 1, relation: '16384', column: 1 }]);
  });

  it('returns nothing for text that is not a query tree', () => {
    expect(viewColumnOrigins('')).toEqual([]);
    expect(viewColumnOrigins('({NOTAQUERY :targetList <>})')).toEqual([]);
    expect(viewColumnOrigins('({QUERY :targetList (')).toEqual([]);
  });
});
