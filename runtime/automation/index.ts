/**
 * The rules action bindings and workflow triggers share, written once: how
 * deep automation may go (depth.ts) and when a write satisfies a trigger's
 * `when` (conditions.ts). Not a capability: the actions and workflows
 * capabilities build and call them.
 */
export { AutomationDepth, DEPTH_EXCEEDED, depthOf, type Attempt } from './depth.ts';
export { compileCondition, columnOf, type Condition } from './conditions.ts';
