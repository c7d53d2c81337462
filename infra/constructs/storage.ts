import { Duration, RemovalPolicy, Validations } from "aws-cdk-lib";
import { AttributeType, BillingMode, Table } from "aws-cdk-lib/aws-dynamodb";
import { Key } from "aws-cdk-lib/aws-kms";
import { BlockPublicAccess, Bucket, BucketEncryption } from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import { replayKeyPrefix, replayRetentionDays } from "#shared/domain/replays.ts";
import { tableDefinition } from "#shared/store/table.ts";

const stringKey = (name: string) => ({ name, type: AttributeType.STRING });

/**
 * The data: the single table, the profile-archive bucket and the credentials key. All are retained
 * when the stack is deleted, so a code deploy or a teardown never loses connections or profiles.
 */
export class Storage extends Construct {
  readonly table: Table;
  readonly bucket: Bucket;
  readonly credentialsKey: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new Table(this, "Table", {
      partitionKey: stringKey(tableDefinition.partitionKey),
      sortKey: stringKey(tableDefinition.sortKey),
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of Object.values(tableDefinition.indexes)) {
      this.table.addGlobalSecondaryIndex({ indexName: index.name, partitionKey: stringKey(index.partitionKey), sortKey: stringKey(index.sortKey) });
    }

    this.bucket = new Bucket(this, "Archives", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      lifecycleRules: [
        // Versions undo an overwrite or a delete for a month, then stop costing storage.
        { noncurrentVersionExpiration: Duration.days(30) },
        // Flow traces (record_session) are kept a month; one is never overwritten, so its expired version goes a day later.
        { prefix: replayKeyPrefix, expiration: Duration.days(replayRetentionDays), noncurrentVersionExpiration: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: "AwsSolutions-S1",
      reason: "Archives are only read and written by the service's functions; each request is already in the API access log with its caller's org.",
    });

    this.credentialsKey = new Key(this, "CredentialsKey", {
      description: "Encrypts stored login credentials",
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
