# expect: TD011@10
"""Seed 003's leakage: the scaler sees the test rows before the split."""

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

X, y = np.random.rand(100, 5), np.random.randint(0, 2, 100)
scaler = StandardScaler()
X_scaled = scaler.fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X_scaled, y, test_size=0.2, random_state=42)
print(X_train.mean(), X_test.mean())
