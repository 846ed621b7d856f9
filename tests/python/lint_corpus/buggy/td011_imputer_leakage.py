# expect: TD011@11
"""An imputer fitted on everything, then the data is split."""

import numpy as np
import sklearn.impute as impute
from sklearn.model_selection import train_test_split


def prepare(frame, target):
    imputer = impute.SimpleImputer(strategy="mean")
    imputer.fit(frame)
    filled = imputer.transform(frame)
    return train_test_split(filled, target, test_size=0.3)


data = np.random.rand(50, 4)
data[data < 0.1] = np.nan
print(prepare(data, np.random.rand(50))[0].shape)
