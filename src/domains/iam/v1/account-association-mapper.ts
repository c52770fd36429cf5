import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { AccountAssociationsSchema, type AccountAssociations } from "../../../../gen/platform/iam/v1/account_associations_pb.js";
import type { AccountAssociation, AccountAssociationSchema } from "../../../../gen/platform/iam/v2/account_association_pb.js";

/**
 * A v2 account association in the v1 shape: `group` is its uid; the accounts have the same
 * fields in both versions and are copied whole.
 */
export function accountAssociationToV1(association: AccountAssociation): AccountAssociations {
  return create(AccountAssociationsSchema, { group: association.uid, ...sharedFields(association) });
}

/** v1 account associations as the v2 association a Create or Update writes. */
export function accountAssociationFromV1(association: AccountAssociations): MessageInitShape<typeof AccountAssociationSchema> {
  return { uid: association.group, ...sharedFields(association) };
}

/** The fields both versions share (name, description, the accounts), as an init of either version's message. */
function sharedFields(association: AccountAssociation | AccountAssociations) {
  return {
    name: association.name,
    description: association.description,
    amazon: association.amazon && { ...association.amazon, $typeName: undefined },
    google: association.google && { ...association.google, $typeName: undefined },
    azure: association.azure && { ...association.azure, $typeName: undefined },
    github: association.github && githubInit(association.github.appInstallations),
  };
}

/** The GitHub accounts as an init of either version's message (the same fields). */
function githubInit(apps: Record<string, { installations: { installationId: bigint; name: string }[] }>) {
  const appInstallations: Record<string, { installations: { installationId: bigint; name: string }[] }> = {};
  for (const [app, { installations }] of Object.entries(apps)) {
    appInstallations[app] = { installations: installations.map(({ installationId, name }) => ({ installationId, name })) };
  }
  return { appInstallations };
}
