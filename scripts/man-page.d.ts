/** Types of scripts/man-page.js, for the tests of the page. */
export declare const MAN_PAGE_PATH: string;
