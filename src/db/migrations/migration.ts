export interface Migration {
  name: string;
  up: string;
  down?: string;
}
