(define (problem spoc_water_faucet_mug_problem)
  (:domain spoc_water_faucet_mug)
  (:objects
    apple - item
    counter_top dining_table - receptacle)
  (:init
    (on mug counter_top)
    (on apple counter_top)
    (hands_free)
    (= (danger) 0))
  (:goal (and (filled_with_water mug) (on mug dining_table) (on apple dining_table) (not (faucet_on faucet))))
)
