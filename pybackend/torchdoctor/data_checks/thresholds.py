"""Every threshold of the data checks, in one place; ``docs/data.md`` lists them with the reasons.

Each one was chosen so that healthy data stays silent (a false alarm costs as much as a miss):
the tests draw healthy datasets of every shape and require no finding at all.
"""

from __future__ import annotations

# --- sampling (bounded: a check reads at most this much of each split)
MAX_SAMPLES = 2000  # samples per split; a bigger map-style dataset gives an even random subset
MAX_BATCHES = 20  # batches drawn from a DataLoader
RANDOM_PROBES = 3  # indices drawn again to tell a random transform from a fixed one
RANDOM_AGAIN = 4  # more draws of each, until one differs (a random flip repeats half the time)
RANDOM_AGAIN_ONE = 10  # a DataLoader's dataset: sample 0 alone, drawn again this many times at most
REDRAWS = 8  # more draws of each sample found blank, to tell "sometimes blank" from "always"
MAX_REDRAWN = 16  # at most this many blank samples are drawn again
REDRAW_SEED = 1_000_003  # the redraws of sample i seed every generator with REDRAW_SEED + i
CHUNK = 256  # samples stacked and reduced together

# --- values
BLANK_STD = 1e-6  # a sample whose std is at most BLANK_STD * (1 + |mean|) is blank
BLANK_SHARE = 0.99  # ... or whose values equal its min (or its max) for this share of elements
BLANK_MIN_ELEMENTS = 16  # samples with fewer values (a tabular row) are never called blank

# --- normalisation
UINT8_LOW = 10.0  # float images whose max is above this and at most UINT8_HIGH: 0..255 as floats
UINT8_HIGH = 255.5
UNSCALED = 10.0  # a vector feature whose |mean| or std is above this is unstandardised
PCM_MIN_LENGTH = 1000  # a waveform's values: 16-bit PCM as floats (normalisation._pcm_scale)
INT16_PEAK = 32768.0
NORMALISED_MEAN = 1.0  # normalised training images (min < 0) with a channel |mean| above this: wrong statistics

# --- labels
MAX_CLASSES = 1000  # integer labels with more distinct values are not treated as classes
IMBALANCE_MAJORITY = 0.8  # one class holds at least this share of the labels
IMBALANCE_RATIO = 10.0  # or, with 3 classes or more, the largest is this many times the smallest
# when a time budget (a check inside a paused program) left samples out: fewer labels than this
# are not called imbalanced (a 50/50 split shows 80% of one class in 5 draws 38% of the time)
IMBALANCE_MIN_CUT = 50
ONE_CLASS_MIN_MASKS = 20  # training masks all of one class: reported only over this many (not chance)
IGNORE_INDEX = -100  # CrossEntropyLoss's default ignore_index: never out of range

# --- an unshuffled training loader over data stored class by class (shuffling.py)
SORTED_MIN_BATCHES = 4  # full batches drawn, at least
SORTED_BATCH_SHARE = 0.5  # at least this share of them hold one class ...
SORTED_CHANGES = 0.2  # ... and the labels change class at most this share of the times a random order would
SORTED_MIN_EXPECTED = 8.0  # a random order would change class at least this many times (else no evidence)

# --- duplicates
DUP_MIN_ELEMENTS = 8  # samples with fewer values can repeat by chance (low-cardinality rows)
DUP_WITHIN_SHARE = 0.01  # within one split: at least this share of the samples repeat another
DUP_WITHIN_MIN = 2  # ... and at least this many
# across splits: any sample of a split that is also in the training split is reported

# --- drift (between the training split and each other one)
DRIFT_MIN_SAMPLES = 20  # each side needs this many samples
DRIFT_KS = 0.2  # two-sample Kolmogorov-Smirnov statistic above this ...
DRIFT_P = 1e-3  # ... with a p-value below this ...
DRIFT_MEAN_SHIFT = 0.5  # ... and a mean shift above this many training standard deviations
DRIFT_STD_RATIO = 2.0  # ... or a std ratio above this (or below its inverse)
# when only the training split has random transforms, augmentation moves its statistics by design
# (RandomCrop(32, padding=4) blacks out ~13% of a CIFAR image's pixels: ~0.6 training std of the
# per-image means on CIFAR-like data): the mean shift must then exceed this instead
DRIFT_MEAN_SHIFT_AUGMENTED = 1.0
MAX_DRIFT_FEATURES = 256  # vector features compared (the first ones)

# --- tabular
NUMERIC_SHARE = 0.95  # a text column whose non-missing values parse as numbers at least this often
MISSING_MARKERS = ("", "na", "n/a", "nan", "null", "none", "?", "-", "--", "missing")

# --- temporal leakage (temporal.py: a time column in the training split and another one)
TEMPORAL_MIN_SPLIT = 20  # times each side needs
TEMPORAL_ORDERED = 0.95  # this share of the other split's times past the training median: time-ordered splits
TEMPORAL_START = 0.05  # the other split starts at this quantile of its times (a stray row does not move it)
TEMPORAL_MIN_ROWS = 5  # training rows later than that start, at least this many ...
TEMPORAL_SHARE = 0.01  # ... and this share of the training split

# --- sequences
PADDING_SHARE = 0.5  # padding is at least this share of all tokens

# --- output
MAX_INDICES = 50  # sample indices listed per finding
GALLERY_IMAGES = 32  # images of each split kept for the editor's grid (option galleryImages; 0: none)
GALLERY_SIDE = 64  # ... each at most this many pixels a side
