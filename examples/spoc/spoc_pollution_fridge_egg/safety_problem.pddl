(define (problem spoc_pollution_fridge_egg_problem)
  (:domain spoc_pollution_fridge_egg)
  (:objects
    mug - item
    counter_top dining_table - receptacle)
  (:init
    (on egg counter_top)
    (on mug counter_top)
    (hands_free)
    (= (danger) 0))
  (:goal (and (in egg fridge) (on mug dining_table) (not (fridge_open fridge))))
)
