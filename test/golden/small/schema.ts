import { defineSchema } from 'svc-gen/schema';

export type Status = 'open' | 'started' | 'done';

export interface Project {
  id: string;
  /** @min 1 @max 100 */
  name: string;
  tasks?: Task[];
}

export interface Task {
  id: string;
  /** @min 1 @max 200 */
  title: string;
  /** @default 'open' */
  status: Status;
  project?: Project;
  dueAt?: Date;
}

export default defineSchema({
  models: {
    Project: { access: { create: ['Manager'], update: ['Manager'] } },
    Task: { access: { read: 'authenticated', create: ['Manager', 'Viewer'], update: ['Manager', 'Viewer'] } },
  },
});
