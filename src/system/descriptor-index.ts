import { toBinary, type DescFile } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/**
 * Lookup tables over a set of served files and the transitive closure of their imports,
 * answering the questions gRPC server reflection asks. Built once; read-only afterwards.
 */
export interface DescriptorIndex {
  /** Fully-qualified names of the services declared in the served files, in order, unique. */
  readonly services: readonly string[];
  /**
   * The serialized FileDescriptorProto of the named file (e.g. "platform/ping/v2/ping.proto")
   * first, followed by every file it transitively imports, each once; undefined if unknown.
   */
  fileWithDeps(fileName: string): readonly Uint8Array[] | undefined;
  /**
   * Name of the file declaring a fully-qualified symbol (a leading dot is ignored): a service,
   * method, message (nested too), field, oneof, enum, enum value or extension.
   */
  fileOfSymbol(symbol: string): string | undefined;
  /** Name of the file declaring extension `number` of message `extendee`. */
  fileOfExtension(extendee: string, number: number): string | undefined;
  /**
   * Known extension numbers of a message, ascending: [] for a known message with none,
   * undefined for an unknown message.
   */
  extensionNumbers(extendee: string): readonly number[] | undefined;
}

/**
 * Indexes `served` (whose services are listed) and every file they import transitively (whose
 * symbols resolve but whose services are not listed). Files are identified by `proto.name`.
 */
export function buildDescriptorIndex(served: readonly DescFile[]): DescriptorIndex {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile): void => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(visit);
  };
  served.forEach(visit);

  const symbols = new Map<string, string>();
  const messages = new Set<string>();
  const extensions = new Map<string, Map<number, string>>();
  const define = (name: string, fileName: string): void => {
    if (!symbols.has(name)) symbols.set(name, fileName);
  };
  for (const [fileName, file] of files) {
    for (const type of nestedTypes(file)) {
      define(type.typeName, fileName);
      switch (type.kind) {
        case "service":
          type.methods.forEach((m) => define(`${type.typeName}.${m.name}`, fileName));
          break;
        case "message":
          messages.add(type.typeName);
          type.fields.forEach((f) => define(`${type.typeName}.${f.name}`, fileName));
          type.oneofs.forEach((o) => define(`${type.typeName}.${o.name}`, fileName));
          break;
        case "enum": {
          // Enum values are siblings of their enum in protobuf's scoping.
          const scope = type.parent?.typeName ?? type.file.proto.package;
          type.values.forEach((v) => define(scope ? `${scope}.${v.name}` : v.name, fileName));
          break;
        }
        case "extension": {
          const byNumber = extensions.get(type.extendee.typeName) ?? new Map<number, string>();
          if (!byNumber.has(type.number)) byNumber.set(type.number, fileName);
          extensions.set(type.extendee.typeName, byNumber);
          break;
        }
      }
    }
  }

  const serialized = new Map<string, Uint8Array>();
  for (const [fileName, file] of files) {
    serialized.set(fileName, toBinary(FileDescriptorProtoSchema, file.proto));
  }
  const withDeps = new Map<string, Uint8Array[]>();
  for (const [fileName, file] of files) {
    const order = new Set<string>();
    const queue: DescFile[] = [file];
    for (let f = queue.shift(); f; f = queue.shift()) {
      if (order.has(f.proto.name)) continue;
      order.add(f.proto.name);
      queue.push(...f.dependencies);
    }
    withDeps.set(fileName, [...order].map((n) => serialized.get(n)!));
  }

  const services = [
    ...new Set(served.flatMap((file) => file.services.map((s) => s.typeName))),
  ];
  const strip = (name: string): string => (name.startsWith(".") ? name.slice(1) : name);

  return {
    services,
    fileWithDeps: (fileName) => withDeps.get(fileName),
    fileOfSymbol: (symbol) => symbols.get(strip(symbol)),
    fileOfExtension: (extendee, number) => extensions.get(strip(extendee))?.get(number),
    extensionNumbers(extendee) {
      const name = strip(extendee);
      const numbers = extensions.get(name);
      if (numbers) return [...numbers.keys()].sort((a, b) => a - b);
      return messages.has(name) ? [] : undefined;
    },
  };
}
