/** A row of circuit_schedules (migration 0007). */
export interface ScheduleRow {
  uid: string;
  user_uid: string;
  circuit_uid: string;
  cron: string;
  timezone: string;
  input: Record<string, unknown>;
  version_uid: string | null;
  is_public: boolean;
  is_paused: boolean;
  last_run_uid: string | null;
  last_fired_at: Date | null;
  last_error: string | null;
  /** The API token it was created with (migration 0022): each fire runs under that token's limits; null: the user's full rights. */
  token_uid: string | null;
  created_at: Date;
  updated_at: Date;
}
