/**
 * The single table's shape, read by CDK (infra) and by the local bootstrap that creates it in
 * DynamoDB Local, so both always agree.
 */
export const tableDefinition = {
  partitionKey: "pk",
  sortKey: "sk",
  timeToLiveAttribute: "expires_at",
  /** Overloaded list indexes; every sort key is `<created_at>#<id>` so newest-first is a reverse query. */
  indexes: {
    byOrg: { name: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk" },
    byProfile: { name: "gsi2", partitionKey: "gsi2pk", sortKey: "gsi2sk" },
    byDomain: { name: "gsi3", partitionKey: "gsi3pk", sortKey: "gsi3sk" },
  },
} as const;

export type IndexName = keyof typeof tableDefinition.indexes;

/** CreateTable input for DynamoDB Local; CDK builds the same from `tableDefinition`. */
export function createTableInput(tableName: string) {
  const { partitionKey, sortKey, indexes } = tableDefinition;
  const indexList = Object.values(indexes);
  const keyAttributes = [partitionKey, sortKey, ...indexList.flatMap((index) => [index.partitionKey, index.sortKey])];
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST" as const,
    AttributeDefinitions: keyAttributes.map((name) => ({ AttributeName: name, AttributeType: "S" as const })),
    KeySchema: [
      { AttributeName: partitionKey, KeyType: "HASH" as const },
      { AttributeName: sortKey, KeyType: "RANGE" as const },
    ],
    GlobalSecondaryIndexes: indexList.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: "HASH" as const },
        { AttributeName: index.sortKey, KeyType: "RANGE" as const },
      ],
      Projection: { ProjectionType: "ALL" as const },
    })),
  };
}
