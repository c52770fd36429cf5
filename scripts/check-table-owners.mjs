// Each table has one owning domain, and only its owner's code names it in a query (part of
// `npm run check`). Another domain reaches those rows through the owner's face (its index.ts).
//
// The owners are read, not listed here: `Database` in src/domains/kit/schema.ts extends one
// interface of tables per domain (src/domains/<d>/…) and the store's own (src/store/, owner
// "store"); each property of such an interface is a table of the folder that declares it.
//
// What counts as naming a table, in every file of src/domains/<d>/ (kit excepted):
// - the first argument of Kysely's selectFrom, insertInto, replaceInto, updateTable, deleteFrom,
//   mergeInto, using and the joins, as a string literal ("t", "t as a") or an array of them;
// - sql.table("t"), and a qualified column ("t.column", "t.column as a") as any method's argument
//   (select, where, orderBy, sql.ref, eb.ref…): a domain refining a query its owner built names it too;
// - the text of a sql`…` template after from, join, into, update or table;
// - the kit's generic helpers, called with a literal name: resourceTable("t", …) and the
//   Domain's ownedByGroup and deletedWithRepo lists.
// The kit (src/domains/kit/) takes table names as parameters and is nobody's owner: its helpers
// query whatever table their caller (a domain, for its own tables, or the composition root over
// every domain's Ownership lists) names, so it is not checked itself. A migration's foreign key
// (addForeignKeyConstraint) states what a table depends on, not a query, and is allowed; a query in
// a migration is checked like any other, but for the store's own tables: a domain's migration may
// move its rows into them (its leases into the jobs kit's job_leases), as the store cannot know a
// domain's tables to do it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const QUERY_METHODS = new Set([
  "selectFrom", "insertInto", "replaceInto", "updateTable", "deleteFrom", "mergeInto", "using",
  "innerJoin", "leftJoin", "rightJoin", "fullJoin", "crossJoin", "innerJoinLateral", "leftJoinLateral", "crossJoinLateral",
]);
const QUALIFIED = /^([A-Za-z_][A-Za-z0-9_]*)\.(?:[A-Za-z_][A-Za-z0-9_]*|\*)(?:\s+as\s+\w+)?$/g;
const SQL_TEXT = /\b(?:from|join|into|update|table)\s+"?([A-Za-z_][A-Za-z0-9_]*)/gi;

function parse(path) {
  return ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The folder that owns what `file` declares: a domain's name, or "store". */
function ownerOf(root, file) {
  const parts = relative(join(root, "src"), file).split(sep);
  if (parts[0] === "domains") return parts[1];
  if (parts[0] === "store") return "store";
  throw new Error(`${file}: tables declared outside a domain or the store`);
}

/** Table name -> owner, from the interfaces `Database` extends in src/domains/kit/schema.ts. */
export function tableOwners(root) {
  const schemaPath = join(root, "src/domains/kit/schema.ts");
  const schema = parse(schemaPath);
  const imported = new Map();
  let extended = [];
  for (const statement of schema.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings)) {
      const from = resolve(dirname(schemaPath), statement.moduleSpecifier.text.replace(/\.js$/, ".ts"));
      for (const element of statement.importClause.namedBindings.elements) imported.set(element.name.text, from);
    }
    if (ts.isInterfaceDeclaration(statement) && statement.name.text === "Database") {
      extended = (statement.heritageClauses ?? []).flatMap((clause) => clause.types.map((type) => type.expression.getText(schema)));
    }
  }
  if (extended.length === 0) throw new Error(`${schemaPath}: no interface Database extending the tables`);
  const owners = new Map();
  for (const name of extended) {
    const file = imported.get(name);
    if (!file) throw new Error(`${schemaPath}: ${name} is not imported`);
    const declaration = parse(file).statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === name);
    if (!declaration) throw new Error(`${file}: no interface ${name}`);
    for (const member of declaration.members) {
      const table = member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)) ? member.name.text : undefined;
      if (!table) continue;
      if (owners.has(table)) throw new Error(`table ${table} is declared by ${owners.get(table)} and ${ownerOf(root, file)}`);
      owners.set(table, ownerOf(root, file));
    }
  }
  return owners;
}

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Table names `node` (an argument) names literally: "t", "t as a", or an array of those. */
function literalTables(node) {
  if (ts.isStringLiteralLike(node)) return [node.text.trim().split(/\s+as\s+/i)[0]];
  if (ts.isArrayLiteralExpression(node)) return node.elements.flatMap(literalTables);
  return [];
}

/** The table of a qualified column reference ("t.column", "t.column as a") or of each in an array. */
function qualifiedTables(node) {
  if (ts.isStringLiteralLike(node)) return [...node.text.matchAll(QUALIFIED)].map((match) => match[1]).slice(0, 1);
  if (ts.isArrayLiteralExpression(node)) return node.elements.flatMap(qualifiedTables);
  return [];
}

function isSqlTag(expression) {
  return ts.isIdentifier(expression) && expression.text === "sql";
}

/** Every table `source` names, with its line. */
function namedTables(source) {
  const named = [];
  const add = (node, tables) => {
    for (const table of tables) named.push({ table, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.arguments.length > 0) {
      const method = node.expression.name.text;
      const first = node.arguments[0];
      if (QUERY_METHODS.has(method)) add(node, literalTables(first));
      if (isSqlTag(node.expression.expression) && method === "table") add(node, literalTables(first));
      for (const argument of node.arguments) add(argument, qualifiedTables(argument));
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "resourceTable" && node.arguments.length > 0) {
      add(node, literalTables(node.arguments[0]));
    }
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && (node.name.text === "ownedByGroup" || node.name.text === "deletedWithRepo")) {
      add(node, literalTables(node.initializer));
    }
    if (ts.isTaggedTemplateExpression(node) && isSqlTag(node.tag)) {
      const template = node.template;
      const texts = ts.isNoSubstitutionTemplateLiteral(template) ? [template.text] : [template.head.text, ...template.templateSpans.map((span) => span.literal.text)];
      for (const text of texts) add(node, [...text.matchAll(SQL_TEXT)].map((match) => match[1]));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return named;
}

/** Every place in `root`'s src/domains/ where a domain's code names a table another owns. */
export function tableOwnerViolations(root) {
  const owners = tableOwners(root);
  const violations = [];
  const domainsDir = join(root, "src/domains");
  for (const domain of readdirSync(domainsDir).sort()) {
    if (domain === "kit" || !statSync(join(domainsDir, domain)).isDirectory()) continue;
    for (const file of files(join(domainsDir, domain)).sort()) {
      const found = new Set();
      const migration = relative(join(domainsDir, domain), file).split(sep)[0] === "migrations";
      for (const { table, line } of namedTables(parse(file)).sort((a, b) => a.line - b.line)) {
        const owner = owners.get(table);
        if (migration && owner === "store") continue;
        const violation = `${relative(root, file).split(sep).join("/")}:${line}: ${domain} names ${owner}'s table ${table}`;
        if (owner !== undefined && owner !== domain && !found.has(violation)) found.add(violation);
      }
      violations.push(...found);
    }
  }
  return violations;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const violations = tableOwnerViolations(process.cwd());
  for (const violation of violations) process.stderr.write(`${violation}\n`);
  if (violations.length > 0) {
    process.stderr.write(`\n${violations.length} quer${violations.length === 1 ? "y names" : "ies name"} another domain's table: reach it through its owner's face (index.ts)\n`);
    process.exit(1);
  }
}
