/**
 * zod/mini (chosen over classic zod for start-up time: scripts/bench.js)
 * loads no language for its built-in messages, so without this every one
 * reads "Invalid input". Imported for its effect by every module with a
 * schema whose messages a user may see; only English enters the bundle.
 */
import { en } from 'zod/locales';
import * as z from 'zod/mini';

if (!z.config().localeError) z.config(en());
