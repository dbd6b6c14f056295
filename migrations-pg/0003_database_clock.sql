-- Added without a default first, then given one: a volatile default in ADD COLUMN would rewrite every existing row
-- with the time of the migration, making old continuations look as if they had just been fired.
ALTER TABLE "audit_events" ADD COLUMN "db_at" bigint;--> statement-breakpoint
ALTER TABLE "audit_events" ALTER COLUMN "db_at" SET DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint;--> statement-breakpoint
ALTER TABLE "injections" ADD COLUMN "db_created_at" bigint;--> statement-breakpoint
ALTER TABLE "injections" ALTER COLUMN "db_created_at" SET DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint;
