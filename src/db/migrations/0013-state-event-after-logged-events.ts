import type { Migration } from './migration';

/**
 * A state change numbers its state event after whatever the same statement already counted into
 * `event_seq`: the statement that ends a run also logs the run's last step events (finishRun), and
 * the terminal state event must follow them. An UPDATE that does not touch `event_seq` numbers as before.
 */
export const stateEventAfterLoggedEvents: Migration = {
  name: '0013-state-event-after-logged-events',
  up: `
CREATE OR REPLACE FUNCTION circuit_run_state_seq() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.event_seq := 1;
  ELSE
    NEW.event_seq := NEW.event_seq + 1;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
`,
  down: `
CREATE OR REPLACE FUNCTION circuit_run_state_seq() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.event_seq := 1;
  ELSE
    NEW.event_seq := OLD.event_seq + 1;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
`,
};
