import type { Migration } from './migration';

/** Migration 0005's numbering function, with what an UPDATE numbers its state event after. */
const stateSeqFunction = (updateBase: 'OLD' | 'NEW') => `
CREATE OR REPLACE FUNCTION circuit_run_state_seq() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.event_seq := 1;
  ELSE
    NEW.event_seq := ${updateBase}.event_seq + 1;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
`;

/**
 * A state change numbers its state event after whatever the same statement already counted into
 * `event_seq`: the statement that ends a run also logs the run's last step events (finishRun), and
 * the terminal state event must follow them. An UPDATE that does not touch `event_seq` numbers as before.
 */
export const stateEventAfterLoggedEvents: Migration = {
  name: '0013-state-event-after-logged-events',
  up: stateSeqFunction('NEW'),
  down: stateSeqFunction('OLD'),
};
